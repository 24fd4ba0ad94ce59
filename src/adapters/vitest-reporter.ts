/**
 * dispatch-hook/vitest/reporter (`reporters: ["default", "dispatch-hook/vitest/reporter"]`): gives the
 * run a directory where each test file's worker writes its record (dispatch-hook/vite adds the setup
 * file that does), then folds them, prints the report of `dispatch-hook audit`, and fails the run on
 * a miss or a worker without a record.
 */
import type { Reporter, TestModule, Vitest } from "vitest/node";
import { type RunAudit, RunDirectory } from "../hooks/run-fold.js";

export default class DispatchHookReporter implements Reporter {
  #vitest: Vitest | undefined;
  #run: RunDirectory | undefined;
  /** The last run's audit, for a test or a wrapper that reads it. */
  last: RunAudit | undefined;

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
    this.#run = new RunDirectory();
  }

  onTestRunStart(): void {
    this.#run?.clear();
  }

  onTestRunEnd(_modules: readonly TestModule[]): void {
    if (this.#run === undefined) return;
    const { audit, text, failed } = this.#run.fold(this.#vitest?.config.root);
    this.last = audit;
    if (this.#vitest === undefined) process.stdout.write(`${text}\n`);
    else this.#vitest.logger.log(text);
    if (failed) process.exitCode = 1;
  }
}
