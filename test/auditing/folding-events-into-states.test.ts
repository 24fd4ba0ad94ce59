import { describe, expect, it } from "vitest";
import { fold } from "../../src/registry/audit-fold.js";

const requested = (id: number, op = "Conv") => ({ kind: "requested", seq: 0, id, backend: "cpu", op, site: "a.js:1" });

describe("fold", () => {
  it("follows each registration through its events to its state and tables", () => {
    const f = fold([
      requested(0),
      { kind: "provided", seq: 1, backend: "cpu", table: 0, tableKind: "Map", module: "file:///t.js", mechanism: "hook" },
      { kind: "applied", seq: 2, id: 0, backend: "cpu", op: "Conv", table: 0, module: "file:///t.js", mechanism: "hook" },
      requested(1, "Pool"),
      {
        kind: "failed",
        seq: 4,
        id: 1,
        backend: "cpu",
        op: "Pool",
        table: 0,
        module: undefined,
        error: { name: "Error", message: "full", code: undefined },
      },
      requested(2, "Relu"),
      { kind: "superseded", seq: 6, id: 2, backend: "cpu", op: "Relu", by: 0 },
      { kind: "restored", seq: 7, id: 2, backend: "cpu", op: "Relu" },
      { kind: "withdrawn", seq: 8, backend: "cpu", table: 0 },
      { kind: "sealed", seq: 9, backend: "cpu", sealed: true },
      { kind: "expected", seq: 10, backend: "cpu", ops: ["Conv"], source: "pkg" },
    ]);
    // The table withdrawn, what was applied to it alone waits again, as the registry has it.
    expect([...f.records.values()].map((r) => [r.op, r.state])).toEqual([
      ["Conv", "pending"],
      ["Pool", "failed"],
      ["Relu", "pending"],
    ]);
    expect(f.records.get(0)?.tables).toEqual([]);
    const applied = { kind: "applied", seq: 1, id: 0, backend: "cpu", op: "Conv", table: 0, module: "file:///t.js", mechanism: "hook" };
    expect(fold([requested(0), applied]).records.get(0)?.tables).toEqual([
      { table: 0, module: "file:///t.js", outcome: "applied", mechanism: "hook" },
    ]);
    expect(f.tables.get("cpu")?.size).toBe(0);
    expect(f.sealed.get("cpu")).toBe(true);
    expect(f.expected.get("cpu")?.get("Conv")).toBe("pkg");
  });

  it("turns refusals, identity and table misses, rejections and stuck disposals into problems", () => {
    const f = fold([
      {
        kind: "refused",
        seq: 0,
        id: undefined,
        backend: "cpu",
        op: "Conv",
        code: "ERR_DISPATCH_CONFLICT",
        message: "conflict!",
        table: undefined,
      },
      {
        kind: "refused",
        seq: 1,
        id: undefined,
        backend: "cpu",
        op: "Conv",
        code: "ERR_DISPATCH_SEALED",
        message: "sealed",
        table: undefined,
      },
      { kind: "identity", seq: 2, id: 4, backend: "cpu", op: "Conv", message: "twin" },
      { kind: "unseen-table", seq: 3, backend: "cpu", op: "Conv", message: "unseen" },
      { kind: "rejected", seq: 4, backend: "cpu", module: undefined, message: "not a table" },
      {
        kind: "stuck",
        seq: 5,
        id: 4,
        backend: "cpu",
        op: "Conv",
        table: 0,
        module: undefined,
        error: { name: "Error", message: "read-only", code: undefined },
      },
    ]);
    expect(f.problems.map((p) => p.kind)).toEqual(["conflict", "identity", "table", "table", "stuck"]);
    expect(f.problems.at(-1)?.message).toContain("refused to give its entry back (read-only)");
  });

  it("skips what it does not know: events from another copy of another version cannot break it", () => {
    const f = fold([null, 5, { kind: "from-the-future", x: 1 }, { kind: "applied", id: 99 }, requested(0)]);
    expect([...f.records.keys()]).toEqual([0]);
  });
});
