/**
 * dispatch-hook/jest/reporter (`reporters: ["default", "dispatch-hook/jest/reporter"]`): gives the run
 * a directory where each test file writes its record (see RunDirectory), then folds them, prints the
 * report of `dispatch-hook audit`, and fails the run on a miss, a test file without a record, or a
 * run where nothing was checked.
 */
import { type RunAudit, RunDirectory } from "../hooks/run-fold.js";
import { DispatchHookError } from "../registry/errors.js";

export default class DispatchHookReporter {
  readonly #run = new RunDirectory();
  readonly #root: string | undefined;
  #error: DispatchHookError | undefined;
  /** The last run's audit, for a test or a wrapper that reads it. */
  last: RunAudit | undefined;

  constructor(globalConfig?: { readonly rootDir?: string }) {
    this.#root = globalConfig?.rootDir;
  }

  onRunStart(): void {
    this.#error = undefined;
    this.#run.clear();
  }

  onRunComplete(): void {
    // In band, test files run in Jest's own process and each writes its record when it ends; one that
    // fails before its setup files run (a file that does not parse) writes none, and Jest says why.
    const own = (writer: { readonly pid: number }) =>
      writer.pid === process.pid
        ? "it is Jest's own process, where no test file ran to its end with dispatch-hook set up (a test file that fails before its setup files run, such as one that does not parse, writes no record; Jest's error above names it)"
        : undefined;
    const { audit, text, verdict, failed } = this.#run.fold(this.#root, own);
    this.last = audit;
    process.stderr.write(`${text}\n`);
    // Failed as dispatch-hook audit fails it: a miss, a file without a record, or nothing checked
    // (no resolver, say: no test file's module was served, and the run proves nothing).
    if (failed) {
      this.#error = new DispatchHookError(
        "ERR_DISPATCH_INCOMPLETE",
        `dispatch-hook audit: ${verdict} (${audit.processes.length} test file(s) audited; the report above says more).`,
      );
    }
  }

  /** Jest fails the run when a reporter returns an error here. */
  getLastError(): Error | undefined {
    return this.#error;
  }
}
