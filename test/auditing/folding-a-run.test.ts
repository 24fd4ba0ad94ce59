import { afterEach, describe, expect, it } from "vitest";
import { foldRun, RunDirectory } from "../../src/hooks/run-fold.js";
import { makeTree } from "../integration/fixture.js";

/** A pid no process has: a start without a record from it is a process that ended. */
const gone = 2 ** 22 + 12_345;

/** A run directory holding these files, each the JSON of its value. */
function runDir(files: Record<string, unknown>): string {
  return makeTree(Object.fromEntries(Object.entries(files).map(([name, value]) => [name, JSON.stringify(value)])));
}

const writer = { pid: gone, ppid: 1, thread: 0, entry: "/app/a.test.js", argv: [], node: "24.0.0" };
const emptyReport = { ok: true, checked: 0, registrations: [], outside: [], plugins: [], backends: [], problems: [], notes: [] };

describe("the reporters' fold of a run", () => {
  const saved = process.env.DISPATCH_HOOK_AUDIT_DIR;
  afterEach(() => {
    if (saved === undefined) delete process.env.DISPATCH_HOOK_AUDIT_DIR;
    else process.env.DISPATCH_HOOK_AUDIT_DIR = saved;
  });

  it("fails a run where nothing was checked, as dispatch-hook audit does (the Jest reporter passed it)", () => {
    process.env.DISPATCH_HOOK_AUDIT_DIR = runDir({
      [`${gone}-0-aa.json`]: { format: "dispatch-hook/audit-record", version: 1, ...writer, exitCode: null, report: emptyReport },
    });
    const { audit, verdict, failed } = new RunDirectory().fold();
    expect(audit.processes.map((p) => p.ok)).toEqual([true]);
    expect(verdict).toBe("nothing was checked: no process made a registration or declared a backend that loaded");
    expect(failed).toBe(true);

    process.env.DISPATCH_HOOK_AUDIT_DIR = runDir({});
    expect(new RunDirectory().fold().failed).toBe(true);
  });

  it("says why a process wrote no record when the caller knows, and otherwise that it was killed; a known exit says how it ended", () => {
    const dir = runDir({ [`${gone}-0-bb.started`]: writer });
    expect(foldRun(dir).processes[0]?.missing).toBe(
      "started, and wrote no audit record: it was killed, or ended before its exit handlers ran",
    );
    expect(foldRun(dir, undefined, undefined, () => "no plugin wrote it").processes[0]?.missing).toBe(
      "started, and wrote no audit record: no plugin wrote it",
    );
    expect(foldRun(dir, undefined, undefined, () => undefined).processes[0]?.missing).toContain("it was killed");
    expect(foldRun(dir, { pid: gone, text: "was killed by SIGKILL" }, undefined, () => "no plugin").processes[0]?.missing).toBe(
      "started, and wrote no audit record: it was killed by SIGKILL",
    );
    expect(foldRun(dir).ok).toBe(false);
  });
});
