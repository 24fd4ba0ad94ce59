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
import { fs, os, path } from "../builtins.js";
import { foldRun, formatRun, type RunAudit } from "../hooks/run-fold.js";
import { DispatchHookError } from "../registry/errors.js";
import { runDirVariable } from "../registry/run-records.js";

export default class DispatchHookReporter {
  readonly #dir: string;
  readonly #own: boolean;
  readonly #root: string | undefined;
  #error: DispatchHookError | undefined;
  /** The last run's audit, for a test or a wrapper that reads it. */
  last: RunAudit | undefined;

  constructor(globalConfig?: { readonly rootDir?: string }) {
    this.#root = globalConfig?.rootDir;
    const given = process.env[runDirVariable];
    this.#own = !given;
    this.#dir = given || fs.mkdtempSync(path.join(os().tmpdir(), "dispatch-hook-run-"));
    if (this.#own) {
      // Jest starts its workers after its reporters, and they inherit this.
      process.env[runDirVariable] = this.#dir;
      const dir = this.#dir;
      process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    }
  }

  onRunStart(): void {
    this.#error = undefined;
    // In watch mode, each run starts empty.
    if (this.#own) for (const name of fs.readdirSync(this.#dir)) fs.unlinkSync(path.join(this.#dir, name));
  }

  onRunComplete(): void {
    const run = foldRun(this.#dir);
    this.last = run;
    process.stderr.write(`\ndispatch-hook audit\n${formatRun(run, this.#root)}\n`);
    // Fails on what went wrong; a run that registered nothing says so, and passes.
    if (run.processes.some((p) => !p.ok) || run.unreadable.length > 0) {
      this.#error = new DispatchHookError(
        "ERR_DISPATCH_INCOMPLETE",
        `dispatch-hook audit: ${run.processes.length} test file(s) audited; the report above names what missed.`,
      );
    }
  }

  /** Jest fails the run when a reporter returns an error here. */
  getLastError(): Error | undefined {
    return this.#error;
  }
}
