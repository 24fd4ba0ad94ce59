import { describe, expect, it } from "vitest";
import { captureCallSite, noTables, Registration, RequestedEvent, type Table } from "../../src/registry/registration.js";

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
