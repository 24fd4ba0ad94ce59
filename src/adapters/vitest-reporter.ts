/**
 * dispatch-hook/vitest/reporter: one audit over every worker of a Vitest run. In the config:
 *
 *   reporters: ["default", "dispatch-hook/vitest/reporter"]
 *
 * It gives the run a directory (DISPATCH_HOOK_AUDIT_DIR, unless the command line already did), where
 * each test file's worker writes its record (dispatch-hook/vite adds the setup file that does), and
 * at the end of the run folds them, prints the same report as `dispatch-hook audit`, and fails the
 * run when a registration missed or a worker wrote no record.
 */
import type { Reporter, TestModule, Vitest } from "vitest/node";
import { fs, os, path } from "../builtins.js";
import { foldRun, formatRun, type RunAudit } from "../hooks/run-fold.js";
import { runDirVariable } from "../registry/run-records.js";

export default class DispatchHookReporter implements Reporter {
  #vitest: Vitest | undefined;
  #dir: string | undefined;
  /** Whether this reporter made the directory (and so clears and removes it). */
  #own = false;
  /** The last run's audit, for a test or a wrapper that reads it. */
  last: RunAudit | undefined;

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
    const given = process.env[runDirVariable];
    if (given) {
      this.#dir = given;
      return;
    }
    this.#dir = fs.mkdtempSync(path.join(os().tmpdir(), "dispatch-hook-run-"));
    this.#own = true;
    const dir = this.#dir;
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    // Workers start after this, and inherit it.
    process.env[runDirVariable] = this.#dir;
  }

  onTestRunStart(): void {
    // In watch mode, each run starts empty.
    if (this.#own && this.#dir !== undefined) for (const name of fs.readdirSync(this.#dir)) fs.unlinkSync(path.join(this.#dir, name));
  }

  onTestRunEnd(_modules: readonly TestModule[]): void {
    if (this.#dir === undefined) return;
    const run = foldRun(this.#dir);
    this.last = run;
    const log = (text: string) => (this.#vitest === undefined ? process.stdout.write(`${text}\n`) : this.#vitest.logger.log(text));
    log(`\ndispatch-hook audit\n${formatRun(run, this.#vitest?.config.root)}`);
    // Fails on what went wrong; a run that registered nothing says so, and passes.
    if (run.processes.some((p) => !p.ok) || run.unreadable.length > 0) process.exitCode = 1;
  }
}
