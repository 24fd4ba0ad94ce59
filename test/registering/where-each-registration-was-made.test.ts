import { describe, expect, it } from "vitest";
import {
  BackendState,
  captureCallSite,
  formatCallSite,
  noTables,
  Registration,
  RequestedEvent,
  type Table,
} from "../../src/registry/registration.js";

class PoolLayer {}
const table = (id: number) => ({ id }) as unknown as Table;
const make = (id: number, backend: string, onDispose: (r: Registration) => void = () => {}) =>
  new Registration(id, backend, PoolLayer, "PoolLayer", () => 0, false, onDispose);

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

describe("RequestedEvent", () => {
  function callerOfRegister() {
    return captureCallSite(callerOfRegister);
  }

  it("formats its call site once, when first read, and serialises with it", () => {
    const registration = make(7, "jax");
    const event = new RequestedEvent(registration, callerOfRegister());
    expect(event).toMatchObject({ kind: "requested", id: 7, backend: "jax", op: "PoolLayer", seq: 0 });
    const site = event.site;
    expect(site).toMatch(/^test\/registry\/registration\.test\.ts:\d+$/);
    expect(event.site).toBe(site);
    expect(JSON.parse(JSON.stringify(event))).toEqual({ kind: "requested", seq: 0, id: 7, backend: "jax", op: "PoolLayer", site });
    expect(new RequestedEvent(registration, undefined).site).toBe("unknown");
  });
});

function registerLike() {
  return captureCallSite(registerLike);
}

describe("call sites", () => {
  it("points at the caller of the named function, relative to the working directory", () => {
    const site = registerLike();
    expect(formatCallSite(site)).toMatch(/^test\/registry\/registration\.test\.ts:\d+$/);
  });

  it("formats frames of every shape", () => {
    expect(formatCallSite(undefined)).toBe("unknown");
    expect(formatCallSite({})).toBe("unknown");
    expect(formatCallSite({ stack: "Error\n    at /abs/outside/file.js:3:9" })).toBe("/abs/outside/file.js:3");
    expect(formatCallSite({ stack: "Error\n    at fn (node:internal/x:3:9)" })).toBe("node:internal/x:3");
    expect(formatCallSite({ stack: "Error\n    at fn (file:///%zz:3:9)" })).toBe("file:///%zz:3");
    expect(formatCallSite({ stack: "Error\n    at <anonymous>" })).toBe("<anonymous>");
    expect(formatCallSite({ stack: `Error\n    at fn (${process.cwd()}/a.js:7:1)` })).toBe("a.js:7");
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
    state.tables.push(t0, t1);
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
