// The head of bin/tau.cjs, written by the build (build.ts) from the facts it shares with the rest of
// tau: the launch facts (startup/launch-facts.ts), `tau run`'s flags (run/flags.ts), the interactive
// UI's commands and flags (tui/flags.ts) and the exit map (errors.ts). Never edited by hand: a test fails while the committed file differs from what this
// writes (GATE-cli-declared-once), and `npm run build` rewrites it.
//
// The head is a shell script and JavaScript at once. `#!/bin/sh` starts it; every other line is
// `":" //; <shell>`, which sh reads as the no-op `:` then its commands, and JavaScript as a string
// statement then a comment. The two here-documents that hand secrets over on fd 3 cannot sit behind
// `//`: their lines are inside a JavaScript block comment, opened by `":" /*;` and closed by `# */`
// (a comment to sh). The string statements are a directive prologue, so the `"use strict"` that
// follows them still applies. What the script does is described in bin/tau.cjs below the head.
//
// Build-time only: nothing at run time imports this module.
import {
  DAEMON_COMMAND,
  DAEMON_LOG,
  DEFERRED_CA_CERTS_ENV,
  DEFERRED_CA_CERTS_SYMBOL,
  EXTRA_CA_CERTS_ENV,
  EXT_COMMAND,
  FOR_RUN_FLAG,
  HELP_FLAGS,
  ID_RANDOM_BYTES,
  INSTANCE_BYTES,
  OPENSSL_CA_OPTION,
  ROOT_RULES,
  RUN_COMMAND,
  RUN_DAEMON_ENV,
  SECRET_NAMES,
  SECRET_PREFIX,
  SECRETS_FD,
  SECRETS_FD_ENV,
  SESSION_DIR_MODE,
  SESSIONS_DIR,
  VERSION_FLAGS,
  formatId,
} from "../startup/launch-facts.js";
import { exitCodeOf, type TauErrorCode } from "./errors.js";
import { EPHEMERAL_FLAG } from "./run/index.js";
import { UI_COMMANDS } from "./tui/flags.js";

/** What starts each line of the head after the first, for sh and for JavaScript. */
export const SCRIPT_LINE = '":" //;';
// Opens a JavaScript block comment around a here-document; the line `# */` closes it.
const SCRIPT_LINE_OPENING_COMMENT = '":" /*;';
const HEREDOC_END = "__TAU_SECRETS__";
/** The last line of the head: everything after it in bin/tau.cjs is written by hand. */
export const HEAD_END = "// ---- end of the lines build.ts writes (handwritten/cli/launcher-script.ts) ----";

/** Random hex digits one read of /proc/sys/kernel/random/uuid gives: its first two groups (8 + 4), never the version or variant digits. */
const UUID_RANDOM_DIGITS = 12;

/** A value written into the script unquoted: only characters that mean nothing to sh. */
function word(value: string): string {
  if (!/^[A-Za-z0-9_./-]+$/.test(value)) throw new Error(`launcher script: ${JSON.stringify(value)} cannot be written unquoted`);
  return value;
}

/** The shell lines: everything before the JavaScript. */
export function launcherShell(): string {
  const gaveUp = exitCodeOf("TAU-E0405");
  const instanceDigits = INSTANCE_BYTES * 2;
  const sessionDigits = ID_RANDOM_BYTES * 2;
  const reads = Math.ceil((instanceDigits + sessionDigits) / UUID_RANDOM_DIGITS);
  const minted = reads * UUID_RANDOM_DIGITS;
  // The shortest session id: its kind, one base-36 digit of time, its random digits.
  const shortestSession = formatId("s", 1, "0".repeat(sessionDigits)).length;
  const sessionKind = word(formatId("s", 0, "").split("-")[0] as string);
  const stateRoot = ROOT_RULES.state.map((r, i) => `${i === 0 ? "if" : "elif"} [ -n "$${word(r.env)}" ]; then __tau_d=$${word(r.env)}/${word(r.path.join("/"))};`).join(" ");
  const sessions = `$__tau_d/${word(SESSIONS_DIR)}`;
  const log = word(DAEMON_LOG);
  const daemon = `${word(DAEMON_COMMAND)} ${word(FOR_RUN_FLAG)}`;
  const secretsFd = String(SECRETS_FD);
  const secretsExport = `export ${word(SECRETS_FD_ENV)}=${secretsFd};`;
  const secretNames = SECRET_NAMES.map(word);
  const secretPrefix = word(SECRET_PREFIX);
  const helpFlags = HELP_FLAGS.map(word).join("|");
  const ca = word(EXTRA_CA_CERTS_ENV);
  const deferredCa = word(DEFERRED_CA_CERTS_ENV);
  const runDaemon = word(RUN_DAEMON_ENV);
  const run = word(RUN_COMMAND);
  const lines = [
    "#!/bin/sh",
    `${SCRIPT_LINE} if [ "\${${ca}+set}" = set ] && case " $NODE_OPTIONS " in *" ${word(OPENSSL_CA_OPTION)}"*) false;; esac; then export ${deferredCa}="$${ca}"; unset ${ca}; else unset ${deferredCa}; fi`,
    `${SCRIPT_LINE} __tau_early() { # \`tau ${run}\`: start its daemon now, beside the client (see "The daemon of a \`tau ${run}\`" below)`,
    `${SCRIPT_LINE}   shift; __tau_e= __tau_h=; for __tau_a in "$@"; do case $__tau_a in ${helpFlags}) return 1;; --${word(EPHEMERAL_FLAG)}) __tau_e=1;; esac; done`,
    `${SCRIPT_LINE}   command -v setsid >/dev/null && [ -r /proc/self/cmdline ] || return 1`,
    `${SCRIPT_LINE}   (__tau_daemon "$@") </dev/null >/dev/null 2>&1 & ${runDaemon}=$!; export ${runDaemon}`,
    `${SCRIPT_LINE} }`,
    `${SCRIPT_LINE} __tau_daemon() { # in the background: mint, make the session's folder and log, start the daemon`,
    `${SCRIPT_LINE}   for __tau_a in ${Array.from({ length: reads }, (_, i) => i + 1).join(" ")}; do read -r __tau_u </proc/sys/kernel/random/uuid || exit ${gaveUp}; __tau_x=\${__tau_u#*-}; __tau_h=$__tau_h\${__tau_u%%-*}\${__tau_x%%-*}; done`,
    `${SCRIPT_LINE}   read -r __tau_t _ </proc/uptime && while read -r __tau_a __tau_v; do [ "$__tau_a" = btime ] && break; done </proc/stat || exit ${gaveUp}`,
    `${SCRIPT_LINE}   __tau_b36 $(( (__tau_v + \${__tau_t%.*}) * 1000 + 1\${__tau_t#*.}0 - 1000 ))`,
    `${SCRIPT_LINE}   __tau_i=\${__tau_h%${"?".repeat(minted - instanceDigits)}} __tau_s=${sessionKind}-$__tau_b-\${__tau_h#${"?".repeat(minted - sessionDigits)}} __tau_l=/dev/null`,
    `${SCRIPT_LINE}   [ \${#__tau_h} -eq ${minted} ] && [ \${#__tau_s} -ge ${shortestSession} ] || exit ${gaveUp}`,
    `${SCRIPT_LINE}   if [ -z "$__tau_e" ]; then`,
    `${SCRIPT_LINE}     ${stateRoot} else exit ${gaveUp}; fi`,
    `${SCRIPT_LINE}     [ -d "${sessions}" ] && mkdir -m ${SESSION_DIR_MODE.toString(8)} "${sessions}/$__tau_s" && : >>"${sessions}/$__tau_s/${log}" || exit ${gaveUp}; __tau_l=${sessions}/$__tau_s/${log}`,
    `${SCRIPT_LINE}   fi`,
    `${SCRIPT_LINE}   [ -n "$__tau_k" ] || exec setsid node "$0" ${daemon} "$__tau_s" "$__tau_i" "$@" </dev/null >>"$__tau_l" 2>&1`,
    `${SCRIPT_LINE_OPENING_COMMENT}   ${secretsExport} exec setsid node "$0" ${daemon} "$__tau_s" "$__tau_i" "$@" </dev/null >>"$__tau_l" 2>&1 ${secretsFd}<<${HEREDOC_END}`,
    `${SCRIPT_LINE}$__tau_k`,
    HEREDOC_END,
    "# */",
    `${SCRIPT_LINE} }`,
    `${SCRIPT_LINE} __tau_secrets() { # move ${secretNames.join(", ")} and every ${secretPrefix}* out of the environment into $__tau_k (NAME=value lines)`,
    `${SCRIPT_LINE}   __tau_kn=$(printf '\\n.'); __tau_kn=\${__tau_kn%.}; set -f; __tau_ko=$IFS; IFS=$__tau_kn`,
    `${SCRIPT_LINE}   for __tau_ka in $__tau_kl; do __tau_ka=\${__tau_ka#export }; __tau_ka=\${__tau_ka#declare -x }`,
    `${SCRIPT_LINE}     case $__tau_ka in ${[`${secretPrefix}*=*`, ...secretNames.map((n) => `${n}=*`)].join("|")}) __tau_ka=\${__tau_ka%%=*};; *) continue;; esac`,
    `${SCRIPT_LINE}     case $__tau_ka in *[!A-Za-z0-9_]*) continue;; esac; eval "__tau_kv=\\\${$__tau_ka+x}"; [ -n "$__tau_kv" ] || continue`,
    `${SCRIPT_LINE}     eval "__tau_kv=\\$$__tau_ka"; unset "$__tau_ka"; __tau_k=$__tau_k$__tau_ka=$__tau_kv$__tau_kn`,
    `${SCRIPT_LINE}   done; IFS=$__tau_ko; set +f; unset __tau_kl __tau_ka __tau_kv __tau_ko __tau_kn`,
    `${SCRIPT_LINE} }`,
    `${SCRIPT_LINE} __tau_b36() { __tau_n=$1 __tau_b=; set -- 0 1 2 3 4 5 6 7 8 9 a b c d e f g h i j k l m n o p q r s t u v w x y z; while [ "$__tau_n" -gt 0 ]; do eval "__tau_b=\\\${$((__tau_n % 36 + 1))}\\$__tau_b"; __tau_n=$((__tau_n / 36)); done; }`,
    `${SCRIPT_LINE} unset ${runDaemon} ${word(SECRETS_FD_ENV)}; __tau_k= __tau_kl=$(export -p); case $__tau_kl in ${[`*${secretPrefix}*`, ...secretNames.map((n) => `*${n}=*`)].join("|")}) __tau_secrets;; esac; unset __tau_kl`,
    `${SCRIPT_LINE} [ "$1" = ${run} ] && __tau_early "$@"`,
    `${SCRIPT_LINE} unset __tau_e __tau_a; [ -n "$__tau_k" ] || exec node "$0" "$@"`,
    `${SCRIPT_LINE_OPENING_COMMENT} ${secretsExport} exec node "$0" "$@" ${secretsFd}<<${HEREDOC_END}`,
    `${SCRIPT_LINE}$__tau_k`,
    HEREDOC_END,
    "# */",
  ];
  return `${lines.join("\n")}\n`;
}

/** What bin/tau.cjs reports when the checkout has no dist/. */
const NOT_BUILT: TauErrorCode = "TAU-E0404";

/** What the JavaScript of bin/tau.cjs reads from the same facts. */
export function launcherConstants(): Record<string, string | number | readonly string[]> {
  return {
    versionFlags: VERSION_FLAGS,
    helpFlags: HELP_FLAGS,
    runCommand: RUN_COMMAND,
    daemonCommand: DAEMON_COMMAND,
    forRunFlag: FOR_RUN_FLAG,
    extCommand: EXT_COMMAND,
    // The interactive UI (cli/tui/flags.ts): `tau` alone or with one of its flags first, `tau attach`, `tau resume`.
    uiFlags: Object.keys(UI_COMMANDS.start.flags).map((name) => `--${name}`),
    uiCommands: Object.keys(UI_COMMANDS).filter((name) => name !== "start"),
    extraCaCertsEnv: EXTRA_CA_CERTS_ENV,
    deferredCaCertsEnv: DEFERRED_CA_CERTS_ENV,
    deferredCaCertsSymbol: DEFERRED_CA_CERTS_SYMBOL,
    secretsFdEnv: SECRETS_FD_ENV,
    secretsFd: String(SECRETS_FD),
    scriptLine: SCRIPT_LINE,
    notBuiltCode: NOT_BUILT,
    notBuiltExit: exitCodeOf(NOT_BUILT),
  };
}

/** A `NAME=value` line handed over on the secrets fd. */
export function secretLinePattern(): RegExp {
  const names = [...SECRET_NAMES.map(word), `${word(SECRET_PREFIX)}[A-Za-z0-9_]+`].join("|");
  return new RegExp(`^(${names})=(.*)$`, "s");
}

/** The whole head of bin/tau.cjs: the shell lines, `"use strict"` and the constants, then `HEAD_END`. */
export function launcherHead(): string {
  const constants = Object.entries(launcherConstants())
    .map(([k, v]) => `  ${k}: ${Array.isArray(v) ? `[${v.map((x) => JSON.stringify(x)).join(", ")}]` : JSON.stringify(v)},`)
    .join("\n");
  return [
    launcherShell(),
    '"use strict";\n',
    "// The lines above and the two constants below are written by the build from the launch facts\n",
    "// (handwritten/startup/launch-facts.ts), `tau run`'s and the interactive UI's flags (cli/run/flags.ts,\n",
    "// cli/tui/flags.ts) and the exit map (cli/errors.ts): change those, then `npm run build`; a test\n",
    "// fails while this file differs.\n",
    `const LAUNCH = {\n${constants}\n};\n`,
    `const SECRET_LINE = ${secretLinePattern().toString()};\n`,
    `${HEAD_END}\n`,
  ].join("");
}

/** `file` (bin/tau.cjs's text) with its head replaced by `launcherHead()`. */
export function withLauncherHead(file: string): string {
  const at = file.indexOf(`\n${HEAD_END}\n`);
  if (at < 0) throw new Error(`bin/tau.cjs: no line ${HEAD_END}`);
  return launcherHead() + file.slice(at + HEAD_END.length + 2);
}
