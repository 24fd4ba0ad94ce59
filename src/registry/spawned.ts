/**
 * In a run, the child processes a thread starts: each leaves `<pid>.spawned` in the run directory as
 * soon as it has a pid, so that the command line's audit waits for a child that outlives the command
 * (a detached one, or one its parent did not wait for), even before that child has started its
 * loader. Node publishes every ChildProcess on its "child_process" diagnostics channel (spawn, exec,
 * execFile, fork); the synchronous ones end before they return and are not published.
 */
import { diagnosticsChannel, fs, path } from "../builtins.js";
import { hub } from "../hub.js";

interface Child {
  readonly pid?: number | undefined;
}

/** One that failed to spawn has no pid, and nothing to wait for. */
function write(dir: string, child: Child): void {
  if (child.pid === undefined) return;
  try {
    fs.writeFileSync(path.join(dir, `${child.pid}.spawned`), JSON.stringify({ pid: child.pid, parent: process.pid }));
  } catch {
    // The run directory is gone (the command's audit has ended): nothing waits for this child.
  }
}

/** Watches this thread's children for run directory `dir`, once per thread and realm whichever copy asks. */
export function watchChildren(dir: string): void {
  hub().shared("spawned-children@1", () => {
    // Published from the ChildProcess constructor, before its pid: written once the spawn has returned, or at exit.
    const unwritten = new Set<Child>();
    const flush = () => {
      for (const child of unwritten) {
        write(dir, child);
        unwritten.delete(child);
      }
    };
    diagnosticsChannel.subscribe("child_process", (message) => {
      unwritten.add((message as { process: Child }).process);
      queueMicrotask(flush);
    });
    process.once("exit", flush);
    return true;
  });
}
