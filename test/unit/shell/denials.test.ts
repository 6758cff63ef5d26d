// Recognising a sandbox denial in a failed command's output (SPEC-sandbox, "Approvals"): which path
// a line names, whether it is protected, and what an approval would grant.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findDenial } from "../../../handwritten/extensions/shell/sandbox/denials.js";
import type { EffectivePolicy } from "../../../handwritten/extensions/shell/sandbox/policy.js";

// Digits and a "u" in the folder names: once, a build step made the quote class match them.
const root = mkdtempSync(join(tmpdir(), "tau-denials-12u-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const project = join(root, "project");
const outside = join(root, "outside-2018u");
mkdirSync(project);
mkdirSync(outside);

const policy: EffectivePolicy = {
  allowedDomains: [],
  deniedDomains: [],
  denyRead: [join(root, "secret")],
  allowRead: [],
  allowWrite: [project],
  denyWrite: [],
  defaultDenyWrite: true,
  protected: [join(project, ".tau"), join(project, ".git", "hooks"), join(project, ".git", "config")],
};

describe("findDenial", () => {
  it("names the path a write error names, and grants its nearest existing folder", () => {
    const line = `/usr/bin/bash: line 1: ${outside}/new/f.txt: Read-only file system`;
    expect(findDenial(`${line}\n`, project, policy)).toEqual({ access: "write", path: join(outside, "new", "f.txt"), grant: outside, protected: false, line });
    expect(findDenial(`touch: cannot touch '${outside}/a': Read-only file system`, project, policy)).toMatchObject({ path: join(outside, "a"), grant: outside });
  });

  it("judges the path written, not the source, on a copy line", () => {
    const line = `fatal: cannot copy '/usr/share/git-core/templates/description' to '${outside}/x/description': Read-only file system`;
    expect(findDenial(line, project, policy)).toMatchObject({ path: join(outside, "x", "description"), grant: outside });
  });

  it("reports a protected path, and anything in a protected git folder, as protected and never grantable", () => {
    expect(findDenial(`mkdir: cannot create directory ‘.tau’: Read-only file system`, project, policy)).toMatchObject({ protected: true, path: join(project, ".tau") });
    const init = `fatal: cannot copy '/usr/share/git-core/templates/description' to '${project}/.git/description': Read-only file system`;
    expect(findDenial(init, project, policy)).toEqual({ access: "write", path: join(project, ".git", "description"), grant: join(project, ".git", "description"), protected: true, gitFolder: true });
  });

  it("names a read-denied path, and nothing for errors the policy does not explain", () => {
    expect(findDenial(`cat: ${root}/secret/token: Permission denied`, project, policy)).toMatchObject({ access: "read", path: join(root, "secret", "token") });
    expect(findDenial(`cat: ${project}/missing: No such file or directory`, project, policy)).toBeUndefined();
    expect(findDenial(`bash: line 1: ${project}/ok.txt: Read-only file system`, project, policy)).toBeUndefined();
    expect(findDenial("x".repeat(5000) + ": Read-only file system", project, policy)).toBeUndefined();
  });
});
