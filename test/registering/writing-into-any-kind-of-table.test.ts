import { describe, expect, it } from "vitest";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import type { DispatchHookError } from "../../src/registry/errors.js";
import { adapterFor, checkAdapter } from "../../src/registry/table-adapter.js";

class PoolLayer {}
const fn = () => 0;

function code(call: () => unknown): string | undefined {
  try {
    call();
  } catch (error) {
    return (error as DispatchHookError).code;
  }
  return undefined;
}

describe("adapterFor", () => {
  it("reads and writes a Dispatcher through its own API", () => {
    const table = new Dispatcher();
    const adapter = adapterFor(table, "numba");
    expect(adapter.kind).toBe("Dispatcher");
    adapter.set(table, PoolLayer, fn);
    expect(table.get(PoolLayer)).toBe(fn);
    expect(adapter.get(table, PoolLayer)).toBe(fn);
    adapter.delete?.(table, PoolLayer);
    expect(table.has(PoolLayer)).toBe(false);
  });

  it("reads and writes a Map", () => {
    const table = new Map();
    const adapter = adapterFor(table, "numba");
    expect(adapter.kind).toBe("Map");
    adapter.set(table, PoolLayer, fn);
    expect(adapter.get(table, PoolLayer)).toBe(fn);
    adapter.delete?.(table, PoolLayer);
    expect(table.size).toBe(0);
  });

  it("writes anything with register(type, fn), and removes with unregister or delete when present", () => {
    const calls: string[] = [];
    const withUnregister = {
      register: () => calls.push("register"),
      unregister: () => calls.push("unregister"),
      get: () => fn,
    };
    const a = adapterFor(withUnregister, "numba");
    a.set(withUnregister, PoolLayer, fn);
    a.delete?.(withUnregister, PoolLayer);
    expect(a.get(withUnregister, PoolLayer)).toBe(fn);
    const withDelete = { register: () => calls.push("register"), delete: () => calls.push("delete"), get: () => "not a function" };
    const b = adapterFor(withDelete, "numba");
    b.delete?.(withDelete, PoolLayer);
    expect(b.get(withDelete, PoolLayer)).toBeUndefined();
    const registerOnly = { register: () => calls.push("register") };
    const c = adapterFor(registerOnly, "numba");
    expect(c.delete).toBeUndefined();
    expect(c.get(registerOnly, PoolLayer)).toBeUndefined();
    expect(calls).toEqual(["register", "unregister", "delete"]);
  });

  it("explains a table of unknown shape", () => {
    let error: DispatchHookError | undefined;
    try {
      adapterFor({ add() {} }, "numba");
    } catch (caught) {
      error = caught as DispatchHookError;
    }
    expect(error?.code).toBe("ERR_DISPATCH_TABLE_SHAPE");
    expect(error?.message).toContain('backend "numba"');
    expect(error?.message).toContain("adapter");
    expect(code(() => adapterFor(42, "numba", checkAdapter({ get: fn, set: fn }, "test")))).toBe("ERR_DISPATCH_TABLE_SHAPE");
  });
});

describe("checkAdapter", () => {
  it("accepts get/set/delete and names the kind", () => {
    expect(checkAdapter({ get: fn, set: fn }, "here").kind).toBe("custom");
    expect(checkAdapter({ kind: "record", get: fn, set: fn, delete: fn }, "here").kind).toBe("record");
  });

  it("refuses bad adapters with a code", () => {
    expect(code(() => checkAdapter(null, "here"))).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(code(() => checkAdapter({ get: fn, set: fn, remove: fn }, "here"))).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(code(() => checkAdapter({ get: fn }, "here"))).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(code(() => checkAdapter({ get: fn, set: fn, delete: 1 }, "here"))).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(code(() => checkAdapter({ get: fn, set: fn, kind: 1 }, "here"))).toBe("ERR_DISPATCH_INVALID_OPTION");
  });
});
