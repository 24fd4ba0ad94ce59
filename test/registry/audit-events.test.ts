import { describe, expect, it } from "vitest";
import type { AuditEventKind } from "../../src/registry/audit-events.js";
import { fold } from "../../src/registry/audit-fold.js";

// Every kind, listed once: adding a kind to the union without listing it here fails typecheck.
const kinds = {
  requested: 1,
  applied: 1,
  failed: 1,
  disposed: 1,
  stuck: 1,
  restored: 1,
  superseded: 1,
  refused: 1,
  identity: 1,
  "unseen-table": 1,
  provided: 1,
  rejected: 1,
  withdrawn: 1,
  expected: 1,
  sealed: 1,
} satisfies Record<AuditEventKind, 1>;

describe("audit events", () => {
  it("every kind of event changes what a fold reports", () => {
    const base = [{ kind: "requested", seq: 0, id: 0, backend: "cpu", op: "Conv", site: "s" }];
    const empty = JSON.stringify(summary(fold(base)));
    const samples: Record<string, object> = {
      requested: { id: 1, backend: "cpu", op: "Pool", site: "s" },
      applied: { id: 0, backend: "cpu", op: "Conv", table: 0, module: undefined, mechanism: "hook" },
      failed: { id: 0, backend: "cpu", op: "Conv", table: 0, module: undefined, error: { name: "E", message: "m", code: undefined } },
      disposed: { id: 0, backend: "cpu", op: "Conv", reason: "handle" },
      stuck: { id: 0, backend: "cpu", op: "Conv", table: 0, module: undefined, error: { name: "E", message: "m", code: undefined } },
      restored: { id: 0, backend: "cpu", op: "Conv" },
      superseded: { id: 0, backend: "cpu", op: "Conv", by: 1 },
      refused: { id: 0, backend: "cpu", op: "Conv", code: "ERR_DISPATCH_CONFLICT", message: "m", table: undefined },
      identity: { id: 0, backend: "cpu", op: "Conv", message: "m" },
      "unseen-table": { backend: "cpu", op: "Conv", message: "m" },
      provided: { backend: "cpu", table: 0, tableKind: "Map", module: undefined, mechanism: "hook" },
      rejected: { backend: "cpu", module: undefined, message: "m" },
      withdrawn: { backend: "cpu", table: 0 },
      expected: { backend: "cpu", ops: ["X"], source: "s" },
      sealed: { backend: "cpu", sealed: true },
    };
    for (const kind of Object.keys(kinds)) {
      // "restored" and "withdrawn" undo something: give them something to undo first.
      const before =
        kind === "restored"
          ? [...base, { kind: "superseded", seq: 1, id: 0, backend: "cpu", op: "Conv", by: 1 }]
          : kind === "withdrawn"
            ? [...base, { kind: "provided", seq: 1, backend: "cpu", table: 0, tableKind: "Map", module: undefined, mechanism: "hook" }]
            : base;
      const changed = JSON.stringify(summary(fold([...before, { kind, seq: 9, ...samples[kind] }])));
      expect(changed, kind).not.toBe(JSON.stringify(summary(fold(before))));
    }
    expect(empty).toContain("pending");
  });
});

function summary(f: ReturnType<typeof fold>) {
  return {
    records: [...f.records.values()].map((r) => [r.id, r.state, r.tables.length]),
    tables: [...f.tables].map(([b, s]) => [b, s.size]),
    sealed: [...f.sealed],
    expected: [...f.expected].map(([b, m]) => [b, [...m.keys()]]),
    problems: f.problems.map((p) => p.kind),
  };
}
