// Reads vitest's JSON report and prints the closing line CI reads: "N passed, N failed, N skipped".
import { readFileSync } from "node:fs";

let report;
try {
  report = JSON.parse(readFileSync(process.argv[2], "utf8"));
} catch (err) {
  console.log(`ci: no test report (${err.message})`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const failed = report.numFailedTests ?? 0;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
// A test file that fails to load has no assertion results but must still count as a failure.
const suiteErrors = (report.testResults ?? []).filter((r) => r.status === "failed" && (r.assertionResults ?? []).length === 0).length;
const totalFailed = failed + suiteErrors;
console.log(`${passed} passed, ${totalFailed} failed, ${skipped} skipped`);
if (totalFailed > 0 || report.success === false) process.exit(1);
if (passed === 0) {
  console.log("ci: no test ran");
  process.exit(1);
}
