import { afterEach, describe, expect, it } from "vitest";
import { foldRun, formatRun, RunDirectory } from "../../src/hooks/run-fold.js";
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

  it("a record whose problems are not problems (no kind or message, as a hand-made file) is unreadable, named, and never ok", () => {
    const report = { ...emptyReport, ok: false, problems: [{ kind: "weird" }] };
    const dir = runDir({ [`${gone}-0-cc.json`]: { format: "dispatch-hook/audit-record", version: 1, ...writer, exitCode: 0, report } });
    const run = foldRun(dir);
    expect(run.unreadable).toEqual([{ file: `${gone}-0-cc.json`, why: "it is a record with missing fields" }]);
    expect(run.ok).toBe(false);
    expect(formatRun(run)).not.toContain("undefined");
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

  it("a thread's realm that wrote no record is covered by another realm of the same thread that did (a vm pool's test files); another thread's is not", () => {
    const record = {
      format: "dispatch-hook/audit-record",
      version: 1,
      ...writer,
      thread: 2,
      exitCode: null,
      report: { ...emptyReport, checked: 1 },
    };
    const covered = foldRun(
      runDir({
        [`${gone}-2-aa.started`]: { ...writer, thread: 2 },
        [`${gone}-2-bb.json`]: record,
        [`${gone}-2-bb.started`]: { ...writer, thread: 2 },
      }),
    );
    expect(covered.processes.map((p) => p.missing)).toEqual([undefined]);
    expect(covered.ok).toBe(true);
    const other = foldRun(runDir({ [`${gone}-3-aa.started`]: { ...writer, thread: 3 }, [`${gone}-2-bb.json`]: record }));
    expect(other.processes.filter((p) => p.missing !== undefined).map((p) => p.thread)).toEqual([3]);
    expect(other.ok).toBe(false);
  });

  it("counts a process's threads apart from its processes: three threads of one process are one process", () => {
    const record = (thread: number) => ({
      format: "dispatch-hook/audit-record",
      version: 1,
      ...writer,
      thread,
      entry: thread === 0 ? writer.entry : null,
      exitCode: null,
      report: { ...emptyReport, checked: 1, ok: thread !== 2, problems: thread === 2 ? [{ kind: "missing", message: "m" }] : [] },
    });
    process.env.DISPATCH_HOOK_AUDIT_DIR = runDir({
      [`${gone}-0-aa.json`]: record(0),
      [`${gone}-1-aa.json`]: record(1),
      [`${gone}-2-aa.json`]: record(2),
    });
    const { text, verdict } = new RunDirectory().fold();
    expect(text).toContain("\n1 process(es) (3 threads) wrote to the run:\n");
    expect(verdict).toBe("not ok: 1 problem(s) in 1 process(es)");
  });

  it("counts processes, not realms: a process whose test files each wrote a record is one process, in the header and the verdict", () => {
    const record = (checked: number) => ({
      format: "dispatch-hook/audit-record",
      version: 1,
      ...writer,
      exitCode: null,
      report: { ...emptyReport, checked },
    });
    process.env.DISPATCH_HOOK_AUDIT_DIR = runDir({
      [`${gone}-0-aa.json`]: record(1),
      [`${gone}-0-bb.json`]: record(1),
      [`${gone}-0-cc.json`]: record(0),
      [`${gone + 1}-0-dd.json`]: { ...record(1), pid: gone + 1 },
    });
    const fine = new RunDirectory().fold();
    expect(fine.text).toContain("\n2 process(es), 4 audit records (one per test file or realm) wrote to the run:\n");
    // Those records hold no registration, only what was checked: there was none to land.
    expect(fine.verdict).toBe("ok: every entry checked is in its table, in 2 process(es), 3 audit records (one per test file or realm)");
    // Three realms of one process that ended without a record: one process without a record.
    process.env.DISPATCH_HOOK_AUDIT_DIR = runDir({
      [`${gone}-0-aa.json`]: record(1),
      [`${gone + 2}-0-aa.started`]: { ...writer, pid: gone + 2 },
      [`${gone + 2}-0-bb.started`]: { ...writer, pid: gone + 2 },
      [`${gone + 2}-0-cc.started`]: { ...writer, pid: gone + 2 },
    });
    const missing = new RunDirectory().fold();
    expect(missing.text).toContain("\n2 process(es) wrote to the run:\n");
    expect(missing.verdict).toBe("not ok: 1 process(es) without a record");
    // Records counted over the processes that wrote them: one without a record does not hide two of one process.
    process.env.DISPATCH_HOOK_AUDIT_DIR = runDir({
      [`${gone}-0-aa.json`]: record(1),
      [`${gone}-0-bb.json`]: record(1),
      [`${gone + 2}-0-aa.started`]: { ...writer, pid: gone + 2 },
    });
    expect(new RunDirectory().fold().text).toContain("\n2 process(es), 2 audit records (one per test file or realm) wrote to the run:\n");
  });

  it("a live thread whose other realm wrote its record is not also 'running'; notes stand apart from a process's problems", () => {
    const failing = {
      format: "dispatch-hook/audit-record",
      version: 1,
      ...writer,
      thread: 2,
      exitCode: null,
      report: {
        ...emptyReport,
        ok: false,
        checked: 1,
        problems: [{ kind: "missing", backend: "gpu", op: "Conv", id: undefined, message: "Conv never arrived" }],
      },
    };
    const run = foldRun(
      runDir({
        [`${gone}-2-aa.json`]: failing,
        [`${gone}-2-bb.started`]: { ...writer, thread: 2 },
        [`${gone + 3}-0-cc.started`]: { ...writer, pid: gone + 3 },
      }),
      undefined,
      () => true,
    );
    expect(run.processes.map((p) => [p.pid, p.thread, p.running === true])).toEqual([
      [gone, 2, false],
      [gone + 3, 0, true],
    ]);
    const text = formatRun(run);
    expect(text).toMatch(/Conv never arrived\n[\s\S]*\nthe run:\n {2}\[running\] pid \d+/);
  });
});
