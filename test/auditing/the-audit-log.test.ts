import { describe, expect, it } from "vitest";
import { hostAdapters } from "../../src/host-adapters.js";
import { type AuditEventKind, AuditLog } from "../../src/registry/audit-events.js";
import { fold } from "../../src/registry/audit-fold.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { DispatchHookError } from "../../src/registry/errors.js";
import { createRegistry } from "../../src/registry/registry.js";
import { thrown } from "../helpers.js";

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
  "expectation-withdrawn": 1,
  sealed: 1,
  "backend-set": 1,
  declaration: 1,
  unresolved: 1,
  displaced: 1,
  overridden: 1,
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
      "expectation-withdrawn": { backend: "cpu", ops: ["X"] },
      sealed: { backend: "cpu", sealed: true },
      "backend-set": { set: "ml-ops" },
      declaration: { backend: "fast", code: "ERR_DISPATCH_UNKNOWN_FUNCTION", message: "m" },
      unresolved: { backend: "fast", op: "total", message: "m" },
      displaced: { id: 0, backend: "cpu", op: "Conv", table: 0, module: undefined, removed: true },
      overridden: { id: 0, backend: "cpu", op: "Conv", table: 0, module: undefined },
    };
    for (const kind of Object.keys(kinds)) {
      // "restored", "withdrawn", "expectation-withdrawn" and "overridden" undo something: give them something to undo first.
      const before =
        kind === "restored"
          ? [...base, { kind: "superseded", seq: 1, id: 0, backend: "cpu", op: "Conv", by: 1 }]
          : kind === "withdrawn"
            ? [...base, { kind: "provided", seq: 1, backend: "cpu", table: 0, tableKind: "Map", module: undefined, mechanism: "hook" }]
            : kind === "expectation-withdrawn"
              ? [...base, { kind: "expected", seq: 1, backend: "cpu", ops: ["X"], source: "s" }]
              : kind === "overridden"
                ? [...base, { kind: "applied", seq: 1, id: 0, backend: "cpu", op: "Conv", table: 0, module: undefined, mechanism: "hook" }]
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
    set: f.set,
  };
}

class PoolLayer {}
class Im2Col {}
class Col2Im {}

describe("AuditLog", () => {
  it("numbers events, returns copies as plain data, and cannot be written or created from outside", () => {
    const registry = createRegistry();
    registry.seal("numba");
    registry.seal("jax");
    const events = registry.audit.events();
    expect(events.map((e) => e.seq)).toEqual([0, 1]);
    // A read-only snapshot: changing it throws, and the log is as it was.
    expect(() => {
      (events as unknown[]).length = 0;
    }).toThrow(TypeError);
    expect(() => {
      (events[0] as { seq: number }).seq = 9;
    }).toThrow(TypeError);
    expect(registry.audit.size).toBe(2);
    expect("record" in registry.audit).toBe(false);
    expect(thrown(() => new AuditLog(Symbol("forged"), [])).code).toBe("ERR_DISPATCH_INVALID_OPTION");
  });

  it("verify() names every problem kind the events show", () => {
    const registry = createRegistry();
    const numba = new Map();
    registry.expect("numba", ["PoolLayer", "Im2Col", "Col2Im"], "ml-ops/package.json");
    registry.register("numba", PoolLayer, () => 0);
    registry.register("numba", Im2Col, () => 0);
    registry.provide("numba", {
      register(type: unknown) {
        if (type === Im2Col) throw new Error("no room");
        numba.set(type, 1);
      },
    });
    registry.register("jax", PoolLayer, () => 0);
    const report = registry.verify();
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => [p.kind, p.backend, p.op])).toEqual([
      ["failed", "numba", "Im2Col"],
      ["missing", "numba", "Col2Im"],
    ]);
    expect(report.problems[1]?.message).toContain("expected (by ml-ops/package.json) but never registered");
    expect(report.backends).toEqual([
      { backend: "jax", tables: 0, loaded: false, sealed: false },
      { backend: "numba", tables: 1, loaded: true, sealed: false },
    ]);
    // Naming jax makes its pending registration a problem; and with no loader in this thread and
    // no jax table, nothing could serve jax at all.
    const focused = registry.verify({ backends: ["jax"] });
    expect(focused.problems.map((p) => [p.kind, p.op])).toEqual([
      ["pending", "PoolLayer"],
      ["no-loader", "-"],
    ]);
    expect(focused.problems[0]?.message).toContain("no jax table ever reached dispatch-hook");
    expect(focused.problems[1]?.message).toContain("jax was named to verify() or assertComplete(), but no dispatch-hook loader");
  });

  it("is one answer: verify(), format() and assertComplete() agree, and the log itself only holds events", () => {
    const registry = createRegistry();
    registry.register("numba", PoolLayer, () => 0);
    registry.provide("numba", {
      register() {
        throw new Error("full");
      },
    });
    expect(registry.verify().problems.map((p) => p.kind)).toEqual(["failed"]);
    expect(registry.format()).toContain("[failed] PoolLayer on numba");
    expect(() => registry.assertComplete()).toThrow(/full/);
    expect("verify" in registry.audit || "format" in registry.audit || "assertComplete" in registry.audit).toBe(false);
  });

  it("assertComplete() throws one error listing every problem", () => {
    const registry = createRegistry();
    registry.expect("numba", ["PoolLayer", "Col2Im"]);
    registry.register("numba", Im2Col, () => 0);
    // No loader in this thread and no numba table: nothing could serve numba, named or expected.
    const unserved = thrown(() => registry.assertComplete({ backends: ["numba"] }));
    expect(unserved).toBeInstanceOf(DispatchHookError);
    expect(unserved.code).toBe("ERR_DISPATCH_NO_LOADER");
    expect(unserved.message).toMatch(/^No table of numba reached dispatch-hook, and no dispatch-hook loader or host adapter is installed/);
    expect(unserved.message).toContain("node --import dispatch-hook/loader.mjs");
    expect(unserved.message).toContain("4 registration problems for numba");
    expect(unserved.message).toContain("[no-loader] numba was named to verify() or assertComplete()");
    expect(unserved.message).toContain("[pending] Im2Col");
    expect(thrown(() => registry.assertComplete()).code).toBe("ERR_DISPATCH_NO_LOADER");
    // With a numba table, what is left is incomplete.
    registry.provide("numba", new Map());
    const error = thrown(() => registry.assertComplete({ backends: ["numba"] }));
    expect(error.code).toBe("ERR_DISPATCH_INCOMPLETE");
    expect(error.message).toContain("2 registration problems for numba");
    expect(error.message).toContain("[missing] PoolLayer");
    expect(error.message).toContain("[missing] Col2Im");
    registry.register("numba", PoolLayer, () => 0);
    registry.register("numba", Col2Im, () => 0);
    expect(() => registry.assertComplete({ backends: ["numba"] })).not.toThrow();
    expect(registry.verify().ok).toBe(true);
  });

  it("assertComplete() naming a backend that has not loaded, under a host adapter, says nothing of it was checked", () => {
    const registry = createRegistry();
    registry.register("numba", Im2Col, () => 0);
    registry.provide("numba", new Map());
    hostAdapters().add("a test's host");
    try {
      expect(registry.verify({ backends: ["numba", "not-yet"] }).ok).toBe(true);
      const error = thrown(() => registry.assertComplete({ backends: ["numba", "not-yet"] }));
      expect(error.code).toBe("ERR_DISPATCH_INCOMPLETE");
      expect(error.message).toMatch(/^not-yet has not loaded in this thread yet, so nothing of it could be checked/);
      expect(() => registry.assertComplete({ backends: ["numba"] })).not.toThrow();
    } finally {
      hostAdapters().delete("a test's host");
    }
  });

  it("counts an expected op that the table holds, however it got there", () => {
    const registry = createRegistry();
    registry.expect("numba", ["PoolLayer"]);
    const table = new Dispatcher({ backend: "numba" });
    table.register(PoolLayer, () => 0);
    registry.provide("numba", table);
    expect(registry.verify()).toMatchObject({ ok: true, checked: 1 });
  });

  it("toJSON() returns data, so the log nests in JSON; toJSONLines() gives one event per line", () => {
    const registry = createRegistry({ callSites: true });
    registry.register("numba", PoolLayer, () => 0);
    registry.provide("numba", new Map(), { module: 'file:///a "quoted"\nname.js' });
    const nested = JSON.parse(JSON.stringify({ audit: registry.audit })) as { audit: Array<{ kind: string; site: string }> };
    expect(nested.audit.map((e) => e.kind)).toEqual(["requested", "provided", "applied"]);
    expect(nested.audit[0]?.site).toMatch(/the-audit-log\.test\.ts:\d+$/);
    const lines = registry.audit.toJSONLines().split("\n");
    expect(lines.map((line) => JSON.parse(line).kind)).toEqual(["requested", "provided", "applied"]);
    expect(JSON.parse(lines[2] as string).module).toBe('file:///a "quoted"\nname.js');
  });

  it("gives each registration's requested and applied events as plain data with every field, whichever way the log is read", () => {
    const registry = createRegistry({ callSites: false });
    registry.provide("numba", new Map(), { module: "file:///tl/numba.js", via: "hook" });
    registry.register("numba", PoolLayer, () => 0);
    registry.register("numba", PoolLayer, () => 1, { override: true });
    const requested = { kind: "requested", backend: "numba", op: "PoolLayer", site: "unknown" };
    const applied = { kind: "applied", backend: "numba", op: "PoolLayer", table: 0, module: "file:///tl/numba.js", mechanism: "immediate" };
    const expected = [
      { kind: "provided", seq: 0, backend: "numba", table: 0, tableKind: "Map", module: "file:///tl/numba.js", mechanism: "hook" },
      { ...requested, seq: 1, id: 0 },
      { ...applied, seq: 2, id: 0 },
      { ...requested, seq: 3, id: 1, override: true },
      { kind: "superseded", seq: 4, id: 0, backend: "numba", op: "PoolLayer", by: 1 },
      { ...applied, seq: 5, id: 1 },
    ];
    const events = registry.audit.events();
    expect(events).toEqual(expected);
    // Plain data: own enumerable properties, nothing read through a prototype.
    for (const event of events) expect(Object.getPrototypeOf(event)).toBe(Object.prototype);
    expect(
      registry.audit
        .toJSONLines()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual(expected);
    expect(JSON.parse(JSON.stringify(registry.audit))).toEqual(expected);
  });

  it("format() prints an aligned table, the problems, and a verdict only over something checked", () => {
    const registry = createRegistry();
    expect(registry.format()).toContain("(no registrations)");
    expect(registry.format()).toContain("nothing was checked: no registrations were made");
    expect(registry.format()).not.toContain("ok:");
    registry.register("numba", PoolLayer, () => 0);
    registry.register("jax", Im2Col, () => 0);
    registry.provide("numba", new Dispatcher({ backend: "numba" }), { module: "file:///tl/numba.js", via: "hook" });
    const text = registry.format({ backends: ["jax"] });
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^id\s+backend\s+op\s+state\s+via\s+site\s+module$/);
    const [applied, pending] = registry.verify().registrations;
    expect([applied?.state, pending?.state]).toEqual(["applied", "pending"]);
    expect(lines[1]).toMatch(/ {2}\/tl\/numba\.js$/);
    expect(text).toContain("2 problem(s):");
    expect(text).toContain("[pending] Im2Col on jax");
    expect(text).toContain("[no-loader] jax");
    expect(createRegistry().format()).not.toContain("ok: every registration landed");
  });

  it("tracks superseded, restored, withdrawn and refused states", () => {
    const registry = createRegistry();
    const table = registry.provide("numba", new Map());
    const first = registry.register("numba", PoolLayer, () => 1);
    registry.register("numba", PoolLayer, () => 2, { override: true });
    expect(registry.verify().registrations.map((r) => r.state)).toEqual(["superseded", "applied"]);
    const snapshot = registry.snapshot();
    first.dispose();
    registry.restore(snapshot);
    expect(registry.verify().registrations.map((r) => r.state)).toEqual(["superseded", "applied"]);
    table.dispose();
    expect(registry.verify().backends).toEqual([{ backend: "numba", tables: 0, loaded: false, sealed: false }]);
    registry.seal("numba");
    expect(thrown(() => registry.register("numba", Col2Im, () => 0)).code).toBe("ERR_DISPATCH_SEALED");
    expect(registry.verify().backends[0]?.sealed).toBe(true);
    // The refusal is in the log, after the seal, as a registration of its own that was refused.
    expect(registry.audit.events().slice(-3)).toMatchObject([
      { kind: "sealed", backend: "numba", sealed: true },
      { kind: "requested", backend: "numba", op: "Col2Im" },
      { kind: "refused", backend: "numba", op: "Col2Im", code: "ERR_DISPATCH_SEALED" },
    ]);
    expect(registry.verify().registrations.map((r) => r.op)).toEqual(["PoolLayer", "PoolLayer", "Col2Im"]);
    expect(registry.verify().registrations[2]?.state).toBe("refused");
  });
});
