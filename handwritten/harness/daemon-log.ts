// The session's daemon.log is the daemon's own stdout and stderr, opened (append) by whoever started
// it. The daemon keeps it bounded on disk (SPEC-session-lifecycle): past DAEMON_LOG_MAX_BYTES its
// contents move to `daemon.log.1` (replacing the previous one) and the file starts again — copied,
// then truncated in place, since the daemon cannot reopen the descriptors it was given. Best effort:
// lines written between the copy and the truncation are lost; it never fails the daemon.
import { copyFileSync, fstatSync, ftruncateSync, statSync } from "node:fs";

export const DAEMON_LOG_MAX_BYTES = 8 * 1024 * 1024;
/** How often the daemon looks at its log's size. */
export const DAEMON_LOG_CHECK_MS = 30_000;

/**
 * When descriptor `fd` is the file at `path` (not a terminal, not another file) and holds more than
 * `maxBytes`, moves its contents to `<path>.1` and empties it. Returns whether it did.
 */
export function trimDaemonLog(path: string, fd = 2, maxBytes = DAEMON_LOG_MAX_BYTES): boolean {
  try {
    const open = fstatSync(fd);
    if (!open.isFile() || open.size <= maxBytes) return false;
    const named = statSync(path);
    if (named.dev !== open.dev || named.ino !== open.ino) return false;
    copyFileSync(path, `${path}.1`);
    ftruncateSync(fd, 0);
    return true;
  } catch {
    return false;
  }
}

/** Checks the log now and every DAEMON_LOG_CHECK_MS (the timer never keeps the daemon alive). */
export function watchDaemonLog(path: string): () => void {
  trimDaemonLog(path, 2);
  const timer = setInterval(() => trimDaemonLog(path, 2), DAEMON_LOG_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
