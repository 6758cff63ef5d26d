// Opens an address in the desktop's browser for a sign-in (`tau provider login --browser`, `tau mcp
// login`): only where there is a desktop; a failure only leaves the address shown.
import { spawn } from "node:child_process";

export function openBrowser(url: string): void {
  const command = process.platform === "darwin" ? "open" : process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? "xdg-open" : undefined;
  if (command === undefined) return;
  try {
    const child = spawn(command, [url], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // The address is on the terminal already.
  }
}
