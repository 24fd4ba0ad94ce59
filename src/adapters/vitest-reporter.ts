/**
 * dispatch-hook/vitest/reporter (`reporters: ["default", "dispatch-hook/vitest/reporter"]`): gives the
 * run a directory where each test file's worker writes its record (dispatch-hook/vite adds the setup
 * file that does), then folds them, prints the report of `dispatch-hook audit`, and fails the run on
 * a miss, a worker without a record, or a run where nothing was checked.
 */
import type { Reporter, TestModule, Vitest } from "vitest/node";
import { type RunAudit, RunDirectory } from "../hooks/run-fold.js";
import type { RecordWriter } from "../registry/run-records.js";

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
    const { audit, text, failed } = this.#run.fold(this.#vitest?.config.root, this.#unrecorded());
    this.last = audit;
    this.#vitest?.logger.log(text);
    if (!failed) return;
    process.exitCode = 1;
    // An error of the run, so that watch mode says FAIL too: it keeps the process, and its exit code says nothing.
    const error = new Error("the dispatch-hook audit above found problems in this run");
    error.name = "DispatchHookAudit";
    this.#vitest?.state.catchError(error, "dispatch-hook audit");
  }

  /**
   * Why a worker wrote no record, when the config says: Vitest stops its workers without running
   * their exit handlers, so only dispatch-hook/vite's setup file (vitest-record.ts, which the plugin
   * adds to every project) writes their records. With no project that has it, none could; a project
   * that has it leaves the usual reason (killed) standing.
   */
  #unrecorded(): ((writer: RecordWriter) => string | undefined) | undefined {
    const projects = this.#vitest?.projects ?? [];
    const armed = projects.some((p) => (p.config.setupFiles ?? []).some((file) => file.endsWith("vitest-record.js")));
    if (projects.length === 0 || armed) return undefined;
    return (writer) =>
      writer.pid === process.pid && writer.thread === 0
        ? undefined
        : "this Vitest run has no dispatch-hook/vite plugin (plugins: [dispatchHook()] from dispatch-hook/vite in the Vitest config), whose setup file writes each test file's record: Vitest stops its workers without running their exit handlers, so none could be written";
  }
}
