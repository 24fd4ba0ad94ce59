import { describe, expect, it } from "vitest";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { entered, enterIn, Registration, type Table } from "../../src/registry/registration.js";
import { createRegistry } from "../../src/registry/registry.js";
import { thrown } from "../helpers.js";

class Op {}
class PoolLayer extends Op {}
class Im2Col extends Op {}

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

const table = (id: number) => ({ id }) as unknown as Table;
const make = (id: number, backend: string, onDispose: (r: Registration) => void = () => {}) =>
  new Registration(id, backend, PoolLayer, "PoolLayer", () => 0, false, onDispose);

describe("handles", () => {
  it("dispose before apply removes the registration from the queue", () => {
    const registry = createRegistry();
    const handle = registry.register("numba", PoolLayer, impl("pool"));
    handle.dispose();
    expect(handle.state).toBe("disposed");
    const table = new Map();
    registry.provide("numba", table);
    expect(table.size).toBe(0);
    expect(registry.verify().registrations[0]?.state).toBe("disposed");
  });

  it("dispose after apply removes it from the table and brings back what it replaced", () => {
    const registry = createRegistry();
    const builtin = impl("builtin");
    const table = new Dispatcher({ backend: "numba" });
    table.register(PoolLayer, builtin);
    registry.provide("numba", table);
    const plugin = impl("plugin");
    const handle = registry.register("numba", PoolLayer, plugin, { override: true });
    expect(table.get(PoolLayer)).toBe(plugin);
    handle[Symbol.dispose]();
    expect(table.get(PoolLayer)).toBe(builtin);
    const other = registry.register("numba", Im2Col, impl("im2col"));
    other.dispose();
    expect(table.has(Im2Col)).toBe(false);
    other.dispose();
    expect(registry.audit.events().filter((e) => e.kind === "disposed")).toHaveLength(2);
  });

  it("dispose leaves alone an entry the framework wrote over the registration's, and the audit says why", () => {
    const registry = createRegistry({ name: "late default" });
    const table = new Dispatcher({ backend: "numba" });
    registry.provide("numba", table);
    const handle = registry.register("numba", PoolLayer, impl("plugin"));
    const late = impl("framework default, filled late");
    table.register(PoolLayer, late);
    expect(registry.verify().problems.map((p) => p.kind)).toEqual(["displaced"]);
    handle.dispose();
    // The registry never wrote the framework's entry: it is not its to take out.
    expect(table.get(PoolLayer)).toBe(late);
    expect(registry.verify().ok).toBe(true);
  });

  it("dispose into a table that cannot remove an entry is a stuck problem, not a silent ok", () => {
    const registry = createRegistry({ name: "no removal" });
    const entries = new Map<unknown, unknown>();
    const table = { register: (type: unknown, f: unknown) => void entries.set(type, f), get: (type: unknown) => entries.get(type) };
    registry.provide("numba", table);
    const plugin = impl("plugin");
    registry.register("numba", PoolLayer, plugin).dispose();
    expect(entries.get(PoolLayer)).toBe(plugin);
    const problems = registry.verify().problems;
    expect(problems.map((p) => p.kind)).toEqual(["stuck"]);
    expect(problems[0]?.message).toContain("no delete() or unregister()");
  });
});

describe("snapshot and restore", () => {
  it("returns to a known state without losing what was registered before", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    const kept = registry.register("numba", PoolLayer, impl("pool"));
    const snapshot = registry.snapshot();
    // A test file: registers, disposes, seals, and loads another backend.
    registry.register("numba", Im2Col, impl("im2col"));
    kept.dispose();
    registry.seal("numba");
    registry.provide("numba", table);
    expect(table.has(PoolLayer)).toBe(false);
    expect(table.has(Im2Col)).toBe(true);

    registry.restore(snapshot);
    expect(table.has(Im2Col)).toBe(false);
    expect(table.resolve(PoolLayer)()).toBe("pool");
    expect(kept.state).toBe("applied");
    expect(registry.isSealed("numba")).toBe(false);
    // The restored registration still disposes through its old handle.
    kept.dispose();
    expect(table.has(PoolLayer)).toBe(false);
  });

  it("takes back an expect() made since the snapshot, and keeps one made before", () => {
    const registry = createRegistry();
    registry.provide("numba", new Map());
    registry.expect("numba", ["PoolLayer"]);
    const snapshot = registry.snapshot();
    registry.expect("numba", ["Im2Col", "PoolLayer"]);
    registry.expect("cuda", ["Im2Col"]);
    const missing = () =>
      registry
        .verify()
        .problems.filter((p) => p.kind === "missing")
        .map((p) => `${p.backend} ${p.op}`);
    expect(missing()).toEqual(["numba PoolLayer", "numba Im2Col"]);
    registry.restore(snapshot);
    expect(missing()).toEqual(["numba PoolLayer"]);
    // Said in the log, as data.
    const withdrawn = registry.audit.events().flatMap((e) => (e.kind === "expectation-withdrawn" ? [`${e.backend}: ${e.ops.join()}`] : []));
    expect(withdrawn).toEqual(["numba: Im2Col", "cuda: Im2Col"]);
    // Taken back for a backend with no table and no loader, it asks for no loader any more.
    expect(registry.verify().problems.filter((p) => p.backend === "cuda")).toEqual([]);
    // The backend it was withdrawn for loads: nothing is missing there.
    registry.provide("cuda", new Map());
    expect(missing()).toEqual(["numba PoolLayer"]);
  });

  it("brings back, restoring a later snapshot, what was expected then, from where it was", () => {
    const registry = createRegistry();
    registry.provide("numba", new Map());
    const empty = registry.snapshot();
    registry.expect("numba", ["PoolLayer"], "the test's own file");
    const later = registry.snapshot();
    registry.restore(empty);
    const missing = () =>
      registry
        .verify()
        .problems.filter((p) => p.kind === "missing")
        .map((p) => `${p.op} (${p.message.includes("the test's own file")})`);
    expect(missing()).toEqual([]);
    registry.restore(later);
    expect(missing()).toEqual(["PoolLayer (true)"]);
  });

  it("refuses a snapshot from another registry", () => {
    const a = createRegistry();
    const b = createRegistry();
    expect(thrown(() => b.restore(a.snapshot())).code).toBe("ERR_DISPATCH_INVALID_SNAPSHOT");
  });
});

describe("Registration", () => {
  it("is its own handle: dispose and Symbol.dispose call back into the registry", () => {
    const disposed: Registration[] = [];
    const registration = make(3, "numba", (r) => disposed.push(r));
    expect(registration).toMatchObject({ id: 3, backend: "numba", opType: PoolLayer, state: "pending" });
    registration.dispose();
    registration[Symbol.dispose]();
    expect(disposed).toEqual([registration, registration]);
  });

  it("tracks its tables: none, one, two, and back to none", () => {
    const a = make(0, "numba");
    const b = make(1, "numba");
    expect([a.tables, a.tableCount]).toEqual([[], 0]);
    expect(Object.isFrozen(a.tables)).toBe(true);
    const first = table(0);
    const second = table(1);
    a.addTable(first);
    expect([a.tables, a.tableCount, a.inTable(first), a.inTable(second)]).toEqual([[first], 1, true, false]);
    a.addTable(second);
    expect([a.tables, a.tableCount]).toEqual([[first, second], 2]);
    expect(a.inTable(first)).toBe(true);
    expect(a.inTable(undefined)).toBe(false);
    expect(b.inTable(first)).toBe(false);
    expect(a.removeTable(first)).toBe(true);
    expect(a.removeTable(first)).toBe(false);
    expect([a.tables, a.tableCount]).toEqual([[second], 1]);
    // What it hands out is a copy: changing it changes nothing.
    (a.tables as Table[]).push(first);
    expect(a.inTable(first)).toBe(false);
    expect(a.removeTable(second)).toBe(true);
    expect([a.tables, a.tableCount, a.inTable(second)]).toEqual([[], 0, false]);
    // One table alone: removed, it is in none.
    b.addTable(first);
    expect(b.removeTable(second)).toBe(false);
    expect(b.removeTable(first)).toBe(true);
    expect([b.tableCount, b.inTable(first)]).toEqual([0, false]);
  });

  it("a table knows which op types the registry has an entry for: one, several, and back to none", () => {
    class A {}
    class B {}
    class C {}
    const t = table(0);
    expect([entered(t, A), entered(t, B)]).toEqual([false, false]);
    enterIn(t, A, true);
    enterIn(t, A, true);
    expect([entered(t, A), entered(t, B)]).toEqual([true, false]);
    enterIn(t, B, false); // not there: nothing changes
    expect(entered(t, A)).toBe(true);
    enterIn(t, B, true);
    enterIn(t, C, true);
    expect([entered(t, A), entered(t, B), entered(t, C)]).toEqual([true, true, true]);
    enterIn(t, A, false);
    expect([entered(t, A), entered(t, B), entered(t, C)]).toEqual([false, true, true]);
    enterIn(t, B, false);
    enterIn(t, C, false);
    expect([entered(t, A), entered(t, B), entered(t, C)]).toEqual([false, false, false]);
    enterIn(t, C, true);
    expect([entered(t, A), entered(t, C)]).toEqual([false, true]);
  });

  it("knows its tables when it is in many (a test runner's module instances), through removals and takeTables()", () => {
    const r = make(0, "numba");
    const tables = Array.from({ length: 20 }, (_, i) => table(i));
    for (const t of tables) r.addTable(t);
    expect(tables.every((t) => r.inTable(t))).toBe(true);
    expect(r.removeTable(tables[3] as Table)).toBe(true);
    expect(r.inTable(tables[3])).toBe(false);
    expect(r.inTable(tables[4])).toBe(true);
    expect(r.tables).toHaveLength(19);
    expect(r.takeTables()).toHaveLength(19);
    expect([r.tables, r.tableCount]).toEqual([[], 0]);
    expect(tables.some((t) => r.inTable(t))).toBe(false);
    r.addTable(tables[0] as Table);
    expect([r.inTable(tables[0]), r.inTable(tables[1])]).toEqual([true, false]);
  });

  it("a registry applies a registration to 50 tables of one backend, and takes it out of each when disposed", () => {
    const registry = createRegistry();
    class Op {}
    const maps = Array.from({ length: 50 }, () => new Map());
    for (const m of maps) registry.provide("many-tables", m);
    const handle = registry.register("many-tables", Op, () => "op");
    expect(maps.every((m) => m.get(Op)?.() === "op")).toBe(true);
    registry.provide("many-tables", maps[7]);
    expect(registry.verify().registrations[0]?.tables).toHaveLength(50);
    handle.dispose();
    expect(maps.some((m) => m.has(Op))).toBe(false);
    registry.dispose();
  });
});
