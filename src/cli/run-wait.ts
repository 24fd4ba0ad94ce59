/**
 * After the command ends, the processes of its run that have not: a child that a process of the run
 * started and did not wait for (its pid left by spawned.ts), and a process that started auditing and
 * has not written its record. The audit waits for them, so that one that outlives the command is
 * judged by its record rather than missed; one still running at the bound fails the run.
 */
import { readdirSync } from "node:fs";
import type { RunAudit } from "../hooks/run-fold.js";
import { alive } from "../registry/run-records.js";

/** How long a child that has not started auditing is waited for: by then it is taken for a program the run does not audit (not node). */
const grace = 5_000;
/** How long the audit waits, after the command ended, for the processes that started auditing. */
export const waitLimit = 30_000;

/** The pids still to wait for, `since` ms after the command ended. */
function outstanding(dir: string, since: number): Set<number> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return new Set(); // the directory is gone: nothing more can be judged
  }
  const present = new Set(names);
  const pids = new Set<number>();
  const starters = new Set<number>();
  for (const name of names) {
    const started = /^(\d+)-\d+-[0-9a-f]+\.started$/.exec(name);
    if (started === null) continue;
    starters.add(Number(started[1]));
    if (!present.has(name.replace(/\.started$/, ".json")) && alive(Number(started[1]))) pids.add(Number(started[1]));
  }
  for (const name of since < grace ? names : []) {
    const pid = Number(/^(\d+)\.spawned$/.exec(name)?.[1]);
    if (pid > 0 && !starters.has(pid) && alive(pid)) pids.add(pid);
  }
  return pids;
}

/**
 * Waits until no process of the run is left to wait for, or the bound; returns those still running
 * then. A signal meanwhile (Ctrl-C, a CI job cancelled) ends the wait: the audit still folds what was
 * recorded and removes its run directory, as it does when the command itself is stopped.
 */
export async function waitForRun(dir: string, limit = waitLimit): Promise<Waited> {
  const start = Date.now();
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const signal of signals) process.on(signal, stop);
  try {
    for (;;) {
      const since = Date.now() - start;
      const pids = outstanding(dir, since);
      if (pids.size === 0 || since >= limit || stopped)
        return {
          running: pids,
          why: stopped
            ? `when a signal stopped the audit, ${Math.round(since / 1000)} s after the command ended`
            : `${Math.round(since / 1000)} s after the command ended`,
        };
      await new Promise((done) => setTimeout(done, 50));
    }
  } finally {
    for (const signal of signals) process.removeListener(signal, stop);
  }
}

/** What the wait left: the processes still running, and since when ("30 s after the command ended"). */
export interface Waited {
  readonly running: ReadonlySet<number>;
  readonly why: string;
}

/** The command's verdict on a process still running when the wait ended: no record, so not ok. */
export function judgeRunning(audit: RunAudit, waited: Waited): RunAudit {
  if (!audit.processes.some((p) => p.running)) return audit;
  const missing = `still running ${waited.why}, with no audit record: what it did is not known`;
  const processes = audit.processes.map((p) => (p.running ? { ...p, running: undefined, ok: false, missing } : p));
  return { ...audit, ok: false, processes: processes as RunAudit["processes"] };
}
