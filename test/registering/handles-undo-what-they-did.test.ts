import { describe, expect, it } from "vitest";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { noTables, Registration, type Table } from "../../src/registry/registration.js";
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

  it("tracks its tables, sharing one empty array until it reaches one", () => {
    const a = make(0, "numba");
    const b = make(1, "numba");
    expect(a.tables).toBe(noTables);
    expect(b.tables).toBe(noTables);
    const first = table(0);
    const second = table(1);
    a.addTable(first);
    a.addTable(second);
    expect(a.inTable(first)).toBe(true);
    expect(a.inTable(undefined)).toBe(false);
    expect(b.inTable(first)).toBe(false);
    expect(a.removeTable(first)).toBe(true);
    expect(a.removeTable(first)).toBe(false);
    expect(a.tables).toEqual([second]);
    expect(Object.isFrozen(noTables)).toBe(true);
  });
});
