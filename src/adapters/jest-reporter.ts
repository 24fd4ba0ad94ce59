/**
 * dispatch-hook/jest/reporter: one audit over every worker of a Jest run. In the config:
 *
 *   reporters: ["default", "dispatch-hook/jest/reporter"]
 *
 * It gives the run a directory (DISPATCH_HOOK_AUDIT_DIR, unless the command line already did), where
 * each test file writes its record when it ends, and at the end of the run folds them, prints the
 * same report as `dispatch-hook audit`, and fails the run when a registration missed or a test file
 * wrote no record.
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
    const { audit, text, failed } = this.#run.fold(this.#root);
    this.last = audit;
    process.stderr.write(`${text}\n`);
    if (failed) {
      this.#error = new DispatchHookError(
        "ERR_DISPATCH_INCOMPLETE",
        `dispatch-hook audit: ${audit.processes.length} test file(s) audited; the report above names what missed.`,
      );
    }
  }

  /** Jest fails the run when a reporter returns an error here. */
  getLastError(): Error | undefined {
    return this.#error;
  }
}
