/**
 * A worker thread's record, written while it runs. `worker.terminate()` (a pool's destroy(), or a
 * process.exit() while workers run) ends a worker without its exit handlers, so the record its exit
 * would write never comes. A worker of an audited run writes its record once it starts, and again
 * after each change to what its audit reads (signalChange(), and the hub's tables and windows), each as written
 * before its end (exit code null); its exit rewrites it as usual. A change marks the thread at once
 * (`<id>.changed`, run-records.ts) and the record comes after the current job's microtasks, so a
 * terminated worker is judged by what it did, and one ended before its last change reached its
 * record is named as such, never judged by an older record.
 */
import { timers, workerThreads } from "../builtins.js";
import { logChanges } from "./audit-events.js";
import { markChanged } from "./run-records.js";

/** Writing records may take the first 50 ms, then a tenth of the thread's time (waiting 100 ms at most): a worker that changes on every turn does not write on every turn. */
const allowance = 50;
const share = 0.1;
const longest = 100;

/**
 * In a worker thread: `write` after start and after changes (within the budget above), never holding
 * the thread open. Returns what stops it: the exit record is the last, and a change after it (an exit
 * listener's) marks nothing.
 */
export function recordWhileRunning(dir: string, write: () => void): () => void {
  if (workerThreads().isMainThread) return () => {};
  const began = performance.now();
  let spent = 0;
  let queued = false;
  let stopped = false;
  const flush = () => {
    queued = false;
    if (stopped) return;
    const start = performance.now();
    try {
      write();
    } catch {
      // Its marker stays: the fold names the thread as one whose record is out of date.
    }
    spent += performance.now() - start;
  };
  const changed = () => {
    try {
      markChanged(dir);
    } catch {
      return; // the run directory is gone: the exit record will say so, if it comes
    }
    if (queued) return;
    queued = true;
    const wait = Math.min(longest, began + (spent - allowance) / share - performance.now());
    // A promise, not queueMicrotask or a timer a test runner may fake (Jest's fake timers), for the soonest write.
    if (wait <= 0) void Promise.resolve().then(flush);
    else timers().setTimeout(flush, wait).unref();
  };
  const changes = logChanges();
  changes.changed = changed;
  changed(); // a worker terminated before it registered anything has a record too
  return () => {
    stopped = true;
    if (changes.changed === changed) changes.changed = undefined;
  };
}
