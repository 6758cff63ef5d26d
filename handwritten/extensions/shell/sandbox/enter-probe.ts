// Whether a bubblewrap starts inside the shared network namespace (shared-network.ts), kept between
// starts. Asking costs every start a process chain (nsenter, bubblewrap, a namespace made and torn
// down: about 12 ms of CPU beside the first command's set-up), and the answer is the machine's: the
// same kernel boot, the same user and mount namespaces this process runs in (another container is
// another answer), the same nsenter, bubblewrap and setpriv, the same limits on user namespaces and
// the same seccomp state give the same answer. A "yes" is kept under those facts; a "no" never is
// (it is asked again, and the session's commands get a namespace each meanwhile). Should the answer
// go stale within a boot (a security policy loaded since), the first command that fails the way
// entering fails has the kept answer forgotten and the question asked again (SharedNetwork.suspect).
import { readFileSync, readlinkSync, rmSync } from "node:fs";
import { release } from "node:os";
import { keptProbeFile, programIdentity, readKept, writeKept } from "./kept-probes.js";
import { onPath } from "./parent-death.js";

/** The file that keeps a "yes", in the state root. */
export function enterProbeFile(stateRoot: string): string {
  return keptProbeFile(stateRoot, "shared-namespace.json");
}

function text(path: string): string {
  try {
    return readFileSync(path, "latin1").slice(0, 8192).trim();
  } catch {
    return "-";
  }
}

function link(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "-";
  }
}

function program(name: string): string {
  const file = onPath(name);
  return file === undefined ? `${name} -` : `${file} ${programIdentity(file) ?? "-"}`;
}

/** What the answer rests on, as one line; undefined where the boot cannot be told (then nothing is kept). */
export function enterProbeKey(): string | undefined {
  const boot = text("/proc/sys/kernel/random/boot_id");
  if (boot === "-") return undefined;
  const status = text("/proc/self/status")
    .split("\n")
    .filter((l) => /^(Seccomp|NoNewPrivs|CapEff|CapBnd):/.test(l))
    .join(",");
  return [
    boot,
    release(),
    String(process.getuid?.() ?? "-"),
    link("/proc/self/ns/user"),
    link("/proc/self/ns/mnt"),
    status,
    text("/proc/sys/user/max_user_namespaces"),
    text("/proc/sys/kernel/unprivileged_userns_clone"),
    text("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
    program("nsenter"),
    program("bwrap"),
    program("setpriv"),
  ].join("|");
}

/** Whether a "yes" is kept for `key`. */
export function keptEnterable(file: string, key: string): boolean {
  const kept = readKept(file);
  return kept?.key === key && kept.enterable === true;
}

/** Keeps a "yes" for `key`. */
export function keepEnterable(file: string, key: string): void {
  writeKept(file, { key, enterable: true });
}

/** Forgets a kept answer: the next start asks again. */
export function forgetEnterable(file: string): void {
  rmSync(file, { force: true });
}

/**
 * Whether a command's output begins the way a failure to enter the namespace does: nsenter's or
 * bubblewrap's own message, before any command ran. Only a hint (a command may print the same): it
 * makes tau ask the question again, never run the command again.
 */
export function looksLikeEnteringFailed(output: string): boolean {
  return /^(nsenter|bwrap): /.test(output);
}
