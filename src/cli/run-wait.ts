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
  const names = readdirSync(dir);
  const present = new Set(names);
  const pids = new Set<number>();
  for (const name of names) {
    const spawned = /^(\d+)\.spawned$/.exec(name);
    if (spawned !== null) {
      const pid = Number(spawned[1]);
      if (since < grace && !names.some((n) => n.startsWith(`${pid}-`) && n.endsWith(".started")) && alive(pid)) pids.add(pid);
      continue;
    }
    const started = /^(\d+)-\d+-[0-9a-f]+\.started$/.exec(name);
    if (started !== null && !present.has(name.replace(/\.started$/, ".json")) && alive(Number(started[1]))) pids.add(Number(started[1]));
  }
  return pids;
}

/** Waits until no process of the run is left to wait for, or the bound; returns those still running then. */
export async function waitForRun(dir: string, limit = waitLimit): Promise<ReadonlySet<number>> {
  const start = Date.now();
  for (;;) {
    const since = Date.now() - start;
    const pids = outstanding(dir, since);
    if (pids.size === 0 || since >= limit) return pids;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** The command's verdict on a process still running at the bound: no record, so not ok. */
export function judgeRunning(audit: RunAudit, limit = waitLimit): RunAudit {
  if (!audit.processes.some((p) => p.running)) return audit;
  const missing = `still running ${limit / 1000} s after the command ended, with no audit record: what it did is not known`;
  const processes = audit.processes.map((p) => (p.running ? { ...p, running: undefined, ok: false, missing } : p));
  return { ...audit, ok: false, processes: processes as RunAudit["processes"] };
}
