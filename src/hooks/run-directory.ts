/**
 * The run directory a test-runner reporter folds: the command line's (DISPATCH_HOOK_AUDIT_DIR already
 * set), or one the reporter makes, names in the environment for the workers it starts next, empties
 * at each run and removes at exit.
 *
 * Who folds what: in its own directory the reporter's fold is the only one. In the command line's,
 * the reporter's process and those that started it (npx, the test runner's bin) run under the loader
 * too, and write their records when they end, after the reporter has folded: it folds what the
 * workers wrote and leaves the processes still running to the command's fold, which comes last.
 */
import { fs, os, path } from "../builtins.js";
import { runDirVariable } from "../registry/run-records.js";
import { foldRun, formatRun, type RunAudit } from "./run-fold.js";

export class RunDirectory {
  readonly path: string;
  /** Whether it was made here (and so is emptied and removed here). */
  readonly #own: boolean;

  constructor() {
    const given = process.env[runDirVariable];
    this.#own = !given;
    this.path = given || fs.mkdtempSync(path.join(os().tmpdir(), "dispatch-hook-run-"));
    if (!this.#own) return;
    // Workers start after the reporter, and inherit this.
    process.env[runDirVariable] = this.path;
    const dir = this.path;
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  }

  /** At the start of a run: in watch mode, each run starts empty. */
  clear(): void {
    if (this.#own) for (const name of fs.readdirSync(this.path)) fs.unlinkSync(path.join(this.path, name));
  }

  /**
   * The run's audit, its report for people, and whether the run fails: on a miss, a worker without a
   * record, or an unreadable file; a run that registered nothing says so, and passes.
   */
  fold(root?: string): { audit: RunAudit; text: string; failed: boolean } {
    const audit = foldRun(this.path, undefined, this.#own ? undefined : alive);
    const failed = audit.processes.some((p) => !p.ok && !p.running) || audit.unreadable.length > 0;
    return { audit, text: `\ndispatch-hook audit\n${formatRun(audit, root)}`, failed };
  }
}

/** Whether a process has not ended (EPERM: it runs, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}
