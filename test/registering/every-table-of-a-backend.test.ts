import { describe, expect, it } from "vitest";
import { type Class, Dispatcher } from "../../src/registry/dispatcher.js";
import { BackendState, Registration, type Table } from "../../src/registry/registration.js";
import { createRegistry } from "../../src/registry/registry.js";

class Op {}
class PoolLayer extends Op {}
class Im2Col extends Op {}
class Col2Im extends Op {}

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

const table = (id: number) => ({ id, ref: new WeakRef({ id }) }) as unknown as Table;

describe("several providers", () => {
  it("applies every registration to every table of a backend, and audits each", () => {
    const registry = createRegistry();
    const first = new Dispatcher({ backend: "numba" });
    const second = new Dispatcher({ backend: "numba" });
    registry.register("numba", PoolLayer, impl("pool"));
    registry.provide("numba", first, { module: "file:///basic.js", via: "hook" });
    registry.provide("numba", second, { module: "file:///basic.js?copy=2", via: "hook" });
    expect(registry.provide("numba", second).id).toBe(1);
    registry.register("numba", Im2Col, impl("im2col"));
    for (const table of [first, second]) {
      expect(table.resolve(PoolLayer)()).toBe("pool");
      expect(table.resolve(Im2Col)()).toBe("im2col");
    }
    const applied = registry.audit.events().filter((e) => e.kind === "applied");
    expect(applied).toHaveLength(4);
    expect(registry.verify().registrations[0]?.tables.map((t) => t.module)).toEqual(["file:///basic.js", "file:///basic.js?copy=2"]);
  });

  it("withdraws a table with its handle", () => {
    const registry = createRegistry();
    const table = new Map();
    const handle = registry.provide("numba", table);
    const registration = registry.register("numba", PoolLayer, impl("pool"));
    handle.dispose();
    handle[Symbol.dispose]();
    expect(table.size).toBe(0);
    expect(registration.state).toBe("pending");
    expect(registry.audit.events().filter((e) => e.kind === "withdrawn")).toHaveLength(1);
  });
});

describe("failures while applying", () => {
  it("records failed with the error and still applies the others", () => {
    const registry = createRegistry();
    const entries = new Map<Class, unknown>();
    const table = {
      register(type: Class, fn: unknown) {
        if (type === Im2Col) throw new RangeError("table is full");
        entries.set(type, fn);
      },
    };
    registry.register("numba", PoolLayer, impl("pool"));
    const bad = registry.register("numba", Im2Col, impl("im2col"));
    registry.register("numba", Col2Im, impl("col2im"));
    registry.provide("numba", table);
    expect([...entries.keys()]).toEqual([PoolLayer, Col2Im]);
    expect(bad.state).toBe("failed");
    const failed = registry.audit.events().find((e) => e.kind === "failed");
    expect(failed).toMatchObject({ op: "Im2Col", error: { name: "RangeError", message: "table is full" } });
    expect(() => registry.assertComplete()).toThrow(/table is full/);
  });
});

class A {}
class B {}
const registration = (id: number, type: new () => unknown = A) =>
  new Registration(
    id,
    "cpu",
    type,
    type.name,
    () => id,
    false,
    () => {},
  );

describe("BackendState", () => {
  it("applies each queued (registration, table) pair once, in order, and only for owners and known tables", () => {
    const state = new BackendState("cpu");
    const [t0, t1, gone] = [table(0), table(1), table(2)];
    state.add(t0, {});
    state.add(t1, {});
    const a = registration(0);
    const b = registration(1, B);
    state.owners.set(A, a);
    state.owners.set(B, b);
    state.enqueueEverywhere(a, "native");
    state.enqueue(b, t1, "hook");
    state.enqueue(b, gone, "hook");
    state.enqueue(registration(9), t0, "hook");
    const applied: string[] = [];
    state.drain((r, t) => {
      applied.push(`${r.id}@${t.id}`);
      r.addTable(t);
      // A registration made while draining is applied after the current one, once.
      if (r === a && t === t0) state.enqueue(b, t0, "immediate");
    });
    expect(applied).toEqual(["0@0", "0@1", "1@1", "1@0"]);
    state.drain(() => applied.push("again"));
    expect(applied).not.toContain("again");
  });

  it("keeps a line behind each owner: the newest waiting comes back first", () => {
    const state = new BackendState("cpu");
    const [first, second, restored] = [registration(1), registration(2), registration(3)];
    state.wait(first);
    state.wait(second);
    state.wait(restored, true);
    state.unwait(second);
    expect(state.heir(A)).toBe(first);
    expect(state.heir(A)).toBe(restored);
    expect(state.heir(A)).toBeUndefined();
  });

  it("lists live registrations oldest first, whatever order they came back in", () => {
    const state = new BackendState("cpu");
    const late = registration(5, B);
    const early = registration(2);
    state.owners.set(B, late);
    state.owners.set(A, early);
    expect(state.live().map((r) => r.id)).toEqual([2, 5]);
  });
});
