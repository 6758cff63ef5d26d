#!/bin/sh
":" //; if [ "${NODE_EXTRA_CA_CERTS+set}" = set ] && case " $NODE_OPTIONS " in *" --use-openssl-ca"*) false;; esac; then export TAU_NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS"; unset NODE_EXTRA_CA_CERTS; else unset TAU_NODE_EXTRA_CA_CERTS; fi
":" //; __tau_early() { # `tau run`: start its daemon now, beside the client (see "The daemon of a `tau run`" below)
":" //;   shift; __tau_e= __tau_h=; for __tau_a in "$@"; do case $__tau_a in -h|--help) return 1;; --ephemeral) __tau_e=1;; esac; done
":" //;   command -v setsid >/dev/null && [ -r /proc/self/cmdline ] || return 1
":" //;   (__tau_daemon "$@") </dev/null >/dev/null 2>&1 & TAU_RUN_DAEMON=$!; export TAU_RUN_DAEMON
":" //; }
":" //; __tau_daemon() { # in the background: mint, make the session's folder and log, start the daemon
":" //;   for __tau_a in 1 2 3; do read -r __tau_u </proc/sys/kernel/random/uuid || exit 3; __tau_x=${__tau_u#*-}; __tau_h=$__tau_h${__tau_u%%-*}${__tau_x%%-*}; done
":" //;   read -r __tau_t _ </proc/uptime && while read -r __tau_a __tau_v; do [ "$__tau_a" = btime ] && break; done </proc/stat || exit 3
":" //;   __tau_b36 $(( (__tau_v + ${__tau_t%.*}) * 1000 + 1${__tau_t#*.}0 - 1000 ))
":" //;   __tau_i=${__tau_h%????????????????????} __tau_s=s-$__tau_b-${__tau_h#????????????????????????} __tau_l=/dev/null
":" //;   [ ${#__tau_h} -eq 36 ] && [ ${#__tau_s} -ge 16 ] || exit 3
":" //;   if [ -z "$__tau_e" ]; then
":" //;     if [ -n "$TAU_HOME" ]; then __tau_d=$TAU_HOME/state; elif [ -n "$XDG_STATE_HOME" ]; then __tau_d=$XDG_STATE_HOME/tau; elif [ -n "$HOME" ]; then __tau_d=$HOME/.local/state/tau; else exit 3; fi
":" //;     [ -d "$__tau_d/sessions" ] && mkdir -m 700 "$__tau_d/sessions/$__tau_s" && : >>"$__tau_d/sessions/$__tau_s/daemon.log" || exit 3; __tau_l=$__tau_d/sessions/$__tau_s/daemon.log
":" //;   fi
":" //;   [ -n "$__tau_k" ] || exec setsid node "$0" daemon --for-run "$__tau_s" "$__tau_i" "$@" </dev/null >>"$__tau_l" 2>&1
":" /*;   export TAU_SECRETS_FD=3; exec setsid node "$0" daemon --for-run "$__tau_s" "$__tau_i" "$@" </dev/null >>"$__tau_l" 2>&1 3<<__TAU_SECRETS__
":" //;$__tau_k
__TAU_SECRETS__
# */
":" //; }
":" //; __tau_secrets() { # move OPENAI_API_KEY and every TAU_SECRET_* out of the environment into $__tau_k (NAME=value lines)
":" //;   __tau_kn=$(printf '\n.'); __tau_kn=${__tau_kn%.}; set -f; __tau_ko=$IFS; IFS=$__tau_kn
":" //;   for __tau_ka in $__tau_kl; do __tau_ka=${__tau_ka#export }; __tau_ka=${__tau_ka#declare -x }
":" //;     case $__tau_ka in TAU_SECRET_*=*|OPENAI_API_KEY=*) __tau_ka=${__tau_ka%%=*};; *) continue;; esac
":" //;     case $__tau_ka in *[!A-Za-z0-9_]*) continue;; esac; eval "__tau_kv=\${$__tau_ka+x}"; [ -n "$__tau_kv" ] || continue
":" //;     eval "__tau_kv=\$$__tau_ka"; unset "$__tau_ka"; __tau_k=$__tau_k$__tau_ka=$__tau_kv$__tau_kn
":" //;   done; IFS=$__tau_ko; set +f; unset __tau_kl __tau_ka __tau_kv __tau_ko __tau_kn
":" //; }
":" //; __tau_b36() { __tau_n=$1 __tau_b=; set -- 0 1 2 3 4 5 6 7 8 9 a b c d e f g h i j k l m n o p q r s t u v w x y z; while [ "$__tau_n" -gt 0 ]; do eval "__tau_b=\${$((__tau_n % 36 + 1))}\$__tau_b"; __tau_n=$((__tau_n / 36)); done; }
":" //; unset TAU_RUN_DAEMON TAU_SECRETS_FD; __tau_k= __tau_kl=$(export -p); case $__tau_kl in *TAU_SECRET_*|*OPENAI_API_KEY=*) __tau_secrets;; esac; unset __tau_kl
":" //; [ "$1" = run ] && __tau_early "$@"
":" //; unset __tau_e __tau_a; [ -n "$__tau_k" ] || exec node "$0" "$@"
":" /*; export TAU_SECRETS_FD=3; exec node "$0" "$@" 3<<__TAU_SECRETS__
":" //;$__tau_k
__TAU_SECRETS__
# */
"use strict";
// The lines above and the two constants below are written by the build from the launch facts
// (handwritten/startup/launch-facts.ts), `tau run`'s and the interactive UI's flags (cli/run/flags.ts,
// cli/tui/flags.ts) and the exit map (cli/errors.ts): change those, then `npm run build`; a test
// fails while this file differs.
const LAUNCH = {
  versionFlags: ["--version", "-v"],
  helpFlags: ["-h", "--help"],
  runCommand: "run",
  daemonCommand: "daemon",
  forRunFlag: "--for-run",
  extCommand: "ext",
  uiFlags: ["--harness-config"],
  uiCommands: ["attach", "resume"],
  extraCaCertsEnv: "NODE_EXTRA_CA_CERTS",
  deferredCaCertsEnv: "TAU_NODE_EXTRA_CA_CERTS",
  deferredCaCertsSymbol: "tau.deferred-extra-ca-certs",
  secretsFdEnv: "TAU_SECRETS_FD",
  secretsFd: "3",
  scriptLine: "\":\" //;",
  notBuiltCode: "TAU-E0404",
  notBuiltExit: 1,
};
const SECRET_LINE = /^(OPENAI_API_KEY|TAU_SECRET_[A-Za-z0-9_]+)=(.*)$/s;
// ---- end of the lines build.ts writes (handwritten/cli/launcher-script.ts) ----
// tau's entry point, started by /bin/sh and then by node: the lines at the top are shell commands to
// sh, and each is a string then a comment to JavaScript. They hand NODE_EXTRA_CA_CERTS to this node
// under another name (see the first statement below), start the daemon of a `tau run` (below), and
// run this file with node from PATH, as `env node` did. The build writes them, and the constants
// after them, from the facts the rest of tau uses (handwritten/cli/launcher-script.ts); everything
// from here on is written by hand.
//
// CommonJS on purpose: an ES module entry pays the module loader's start-up before its first line
// runs (DECISION-startup-budget). Hot paths are answered here before the command framework (oclif)
// is loaded: `--version`, `tau run`, and the processes tau starts itself (`daemon`, `ext <name>`) run
// a self-contained bundle from dist/fast/ with a V8 code cache; the interactive UI (`tau`, `attach`,
// `resume`) loads its own small first chunk; everything else goes to the command framework.
//
// The daemon of a `tau run`: a run's client would start it only once its own node had booted (most
// of a short job's wait, DECISION-startup-budget), so the shell starts it beside the client. A
// background child does what the client's launcher does (transport/launch.ts, cli/owned-daemon.ts),
// with shell built-ins only but for one mkdir: it mints the runtime instance and the session id
// (`s-<ms in base 36>-<12 hex>`) from the kernel's CSPRNG (three reads of
// /proc/sys/kernel/random/uuid, of which only the random digits are used) and the clock (/proc/stat's
// boot time plus /proc/uptime: it only orders ids), makes the session's folder (0700; the daemon
// makes its log 0600 when it starts) under the state root unless the run is --ephemeral, and becomes
// `tau daemon --for-run SESSION INSTANCE RUN-ARGS` in a session of its own (setsid), its output to
// that log. The shell itself only forks, so the client's start waits for none of it. The client alone
// is told the child's pid, in TAU_RUN_DAEMON (an inherited value is cleared first); it adopts the
// daemon once it is sure the pid is its own child and reads the session and the instance from the
// child's command line (cli/run/daemon.ts). Both parse the run's arguments with the same parser, so
// both know whether the run goes ahead. Where a step is unavailable (no setsid or /proc, no sessions
// folder yet) or the client asks for help, the child exits or nothing is started, and the client
// starts the daemon itself. The id format, the state root and these arguments are launch facts
// (handwritten/startup/launch-facts.ts), which the lines at the top are written from.
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

// NODE_EXTRA_CA_CERTS makes node read and parse every root certificate before its first line runs
// (DECISION-startup-budget), though only a TLS client needs them. tau's own processes are started
// with it renamed to TAU_NODE_EXTRA_CA_CERTS (bin/tau.cjs above, config/env.ts for the daemon and
// first-party extensions); it is put back here, so every process this one starts (a shell command,
// another extension) sees the user's variable unchanged, and the one TLS client (the provider's
// egress) adds the certificates itself, on its first https connection.
const deferredCaCerts = process.env[LAUNCH.deferredCaCertsEnv];
if (deferredCaCerts !== undefined) {
  delete process.env[LAUNCH.deferredCaCertsEnv];
  process.env[LAUNCH.extraCaCertsEnv] = deferredCaCerts;
  process[Symbol.for(LAUNCH.deferredCaCertsSymbol)] = deferredCaCerts;
}

// Secrets never sit in a tau process's environment block (/proc/<pid>/environ shows it to every
// process of the user): the launcher lines above, and every tau process that starts another
// (transport/launch.ts), take OPENAI_API_KEY and each TAU_SECRET_* out of the environment and hand
// them over on a pipe, fd TAU_SECRETS_FD, as `NAME=value` lines. They are put back into process.env
// here, which changes what this process sees, not its environment block.
const secretsFd = process.env[LAUNCH.secretsFdEnv];
if (secretsFd !== undefined) {
  delete process.env[LAUNCH.secretsFdEnv];
  if (secretsFd === LAUNCH.secretsFd) takeSecrets(Number(secretsFd));
}

const argv = process.argv.slice(2);
const helpWanted = LAUNCH.helpFlags.some((flag) => argv.includes(flag));

if (argv.length === 1 && LAUNCH.versionFlags.includes(argv[0])) {
  const pkg = JSON.parse(require("node:fs").readFileSync(join(__dirname, "..", "package.json"), "utf8"));
  process.stdout.write(`tau/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else if (argv[0] === LAUNCH.runCommand && !helpWanted) {
  runFast("run", argv.slice(1));
} else if (argv[0] === LAUNCH.daemonCommand && argv[1] === LAUNCH.forRunFlag) {
  runFast("run-early-daemon", argv.slice(2));
} else if (argv[0] === LAUNCH.daemonCommand) {
  runFast("daemon", argv.slice(1));
} else if (argv[0] === LAUNCH.extCommand && /^[a-z0-9-]+$/.test(argv[1] ?? "") && runFast(`ext-${argv[1]}`, argv.slice(2), true)) {
  // a first-party extension with a bundle of its own
} else if (argv[0] === LAUNCH.extCommand) {
  // an unknown extension name: the generic entry explains
  loadBuilt("ext/main.js").then((ext) => ext.main(argv.slice(1)));
} else if (argv.length === 0 || LAUNCH.uiFlags.includes(argv[0]) || (LAUNCH.uiCommands.includes(argv[0]) && !helpWanted)) {
  loadBuilt("cli/tui-main.js").then((tui) => tui.main(argv));
} else {
  // the command framework finds package.json from this file's URL
  loadBuilt("cli/main.js").then((cli) => cli.main(pathToFileURL(__filename).href));
}

/**
 * Runs `dist/fast/<name>.cjs` and its main(args). Returns false when `optional` and there is no such
 * bundle.
 */
function runFast(name, args, optional = false) {
  const { loadBundle } = require("./bundle-loader.cjs");
  let bundle;
  try {
    bundle = loadBundle(join(__dirname, "..", "dist", "fast", `${name}.cjs`));
  } catch (err) {
    if (err && err.code === "ENOENT") {
      if (optional) return false;
      notBuilt();
    }
    throw err;
  }
  Promise.resolve(bundle.exports.main(args)).finally(() => bundle.settled());
  return true;
}

/** Imports an ES module from dist/, with an actionable message when the checkout was never built. */
function loadBuilt(entry) {
  return import(pathToFileURL(join(__dirname, "..", "dist", entry)).href).catch((err) => {
    if (err && err.code === "ERR_MODULE_NOT_FOUND" && String(err.message).includes(`dist/${entry}`)) notBuilt();
    throw err;
  });
}

/** The checkout was never built (cli/errors.ts). */
function notBuilt() {
  process.stderr.write(`tau: not built yet; run \`npm ci\` (or \`npm run build\`) in the tau checkout [${LAUNCH.notBuiltCode}]\n`);
  process.exit(LAUNCH.notBuiltExit);
}

/** Reads the secrets handed over on `fd` into process.env. */
function takeSecrets(fd) {
  const fs = require("node:fs");
  let text;
  try {
    const st = fs.fstatSync(fd);
    // a pipe (the launcher's here-document), a socket pair (node's stdio pipe) or a deleted file: never a terminal
    if (!st.isFIFO() && !st.isSocket() && !st.isFile()) return;
    text = fs.readFileSync(fd, "utf8");
    fs.closeSync(fd);
  } catch {
    return;
  }
  if (text.startsWith(LAUNCH.scriptLine)) text = text.slice(LAUNCH.scriptLine.length); // the launcher's here-document line
  let name;
  for (const line of text.split("\n")) {
    const m = SECRET_LINE.exec(line);
    if (m) {
      name = m[1];
      process.env[name] = m[2];
    } else if (name !== undefined && line !== "") {
      process.env[name] += `\n${line}`; // a value that held a line break
    }
  }
}

