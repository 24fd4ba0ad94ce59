import { describe, expect, it } from "vitest";
import { captureCallSite } from "../../src/registry/call-site.js";
import { noTables, Registration, RequestedEvent, type Table } from "../../src/registry/registration.js";

class PoolLayer {}
const table = (id: number) => ({ id }) as unknown as Table;

describe("Registration", () => {
  it("is its own handle: dispose and Symbol.dispose call back into the registry", () => {
    const disposed: Registration[] = [];
    const registration = new Registration(
      3,
      "numba",
      PoolLayer,
      "PoolLayer",
      () => 0,
      false,
      (r) => disposed.push(r),
    );
    expect(registration).toMatchObject({ id: 3, backend: "numba", opType: PoolLayer, state: "pending" });
    registration.dispose();
    registration[Symbol.dispose]();
    expect(disposed).toEqual([registration, registration]);
  });

  it("tracks its tables, sharing one empty array until it reaches one", () => {
    const a = new Registration(
      0,
      "numba",
      PoolLayer,
      "PoolLayer",
      () => 0,
      false,
      () => {},
    );
    const b = new Registration(
      1,
      "numba",
      PoolLayer,
      "PoolLayer",
      () => 0,
      false,
      () => {},
    );
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
    const registration = new Registration(
      7,
      "jax",
      PoolLayer,
      "PoolLayer",
      () => 0,
      false,
      () => {},
    );
    const event = new RequestedEvent(registration, callerOfRegister());
    expect(event).toMatchObject({ kind: "requested", id: 7, backend: "jax", op: "PoolLayer", seq: 0 });
    const site = event.site;
    expect(site).toMatch(/^test\/registry\/registration\.test\.ts:\d+$/);
    expect(event.site).toBe(site);
    expect(JSON.parse(JSON.stringify(event))).toEqual({ kind: "requested", seq: 0, id: 7, backend: "jax", op: "PoolLayer", site });
    expect(new RequestedEvent(registration, undefined).site).toBe("unknown");
  });
});
