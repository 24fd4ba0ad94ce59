import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../src/registry/audit-events.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import type { DispatchHookError } from "../../src/registry/errors.js";
import { Registration } from "../../src/registry/registration.js";
import { createRegistry } from "../../src/registry/registry.js";
import { adapterFor, checkAdapter } from "../../src/registry/table-adapter.js";
import { wrote } from "../../src/registry/table-entries.js";
import { TableWriter } from "../../src/registry/table-writer.js";
import { byNameAdapter } from "../helpers.js";

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

class Pool {}

function writer() {
  const events: Array<Partial<AuditEvent>> = [];
  let listening = false;
  const w = new TableWriter({
    record: (event) => events.push(event as Partial<AuditEvent>),
    setState: (registration, next) => {
      registration.state = next;
    },
    listen: () => {
      listening = true;
    },
    stopListening: () => {
      listening = false;
    },
  });
  let next = 0;
  const registration = (impl: () => unknown, override = false) => new Registration(next++, "numba", Pool, "Pool", impl, override, () => {});
  return { w, events, registration, listening: () => listening };
}

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

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
    expect(error?.message).toContain(
      'The table provided for backend "numba" is not a Dispatcher, a Map, or an object with register(type, impl): got Object instance.',
    );
    expect(error?.message).toContain("adapter");
    // A CommonJS plugin registers through the CommonJS entry's registry: an adapter declared on the ES one is not its.
    expect(error?.message).toContain('a CommonJS plugin\'s is require("dispatch-hook").registry');
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

describe("TableWriter", () => {
  it("applies an owner to every table of its backend, and puts back what the table held when it is disposed", () => {
    const { w, events, registration, listening } = writer();
    const table = new Map();
    w.provide("numba", table, adapterFor(table, "numba", undefined), { module: "file:///numba.js", via: "hook" });
    const mine = () => "mine";
    const r = registration(mine);
    w.activate(r, "immediate");
    expect(listening()).toBe(true);
    expect(table.get(Pool)).toBe(mine);
    expect(r.state).toBe("applied");
    w.dispose(r, "handle");
    expect(table.has(Pool)).toBe(false);
    expect(listening()).toBe(false);
    expect(events.map((e) => e.kind)).toEqual(["provided", "applied", "disposed"]);
  });

  it("refuses to replace an entry it did not write, unless overridden; a withdrawn table gets its entry back out", () => {
    const { w, events, registration } = writer();
    const framework = () => "framework's";
    const table = new Map([[Pool, framework]]);
    const handle = w.handle(w.provide("numba", table, adapterFor(table, "numba", undefined), undefined));
    const polite = registration(() => "plugin's");
    w.activate(polite, "immediate");
    expect(polite.state).toBe("refused");
    expect(table.get(Pool)).toBe(framework);
    w.dispose(polite, "handle");
    const forced = registration(() => "forced", true);
    w.activate(forced, "immediate");
    expect(table.get(Pool)).toBe(forced.impl);
    // It says which registration wrote it (its place in registration order and its implementation).
    expect(wrote(w.backends.values(), table, Pool, forced.impl)).toMatchObject({ seq: forced.seq, impl: forced.impl });
    handle.dispose();
    // Withdrawn: the framework's own entry is back, and the registration waits for another table.
    expect(table.get(Pool)).toBe(framework);
    expect(forced.state).toBe("pending");
    expect(events.at(-1)?.kind).toBe("withdrawn");
  });

  it("says it wrote an entry of a table keyed by op name (an adapter that writes under the class's name), and no other", () => {
    const { w, registration } = writer();
    const table = new Map<string, unknown>();
    w.provide("numba", table, adapterFor(table, "numba", byNameAdapter), undefined);
    const mine = registration(() => "mine");
    w.activate(mine, "immediate");
    expect(table.get("Pool")).toBe(mine.impl);
    const ask = (opType: Function | string, impl: unknown) => wrote(w.backends.values(), table, opType, impl);
    expect(ask("Pool", mine.impl)).toMatchObject({ seq: mine.seq, impl: mine.impl });
    expect(ask("Pool", () => "someone else's")).toBe(false);
    expect(ask("Conv", mine.impl)).toBe(false);
  });
});

describe("custom adapters", () => {
  it("uses the adapter declared for the backend", () => {
    const registry = createRegistry();
    const store: Record<string, unknown> = Object.create(null);
    registry.declare("pytorch", {
      adapter: {
        kind: "record",
        get: (_t, type) => store[type.name] as never,
        set: (_t, type, fn) => {
          store[type.name] = fn;
        },
        delete: (_t, type) => {
          delete store[type.name];
        },
      },
    });
    const pool = impl("pool");
    const handle = registry.register("pytorch", PoolLayer, pool);
    registry.provide("pytorch", store);
    expect(store.PoolLayer).toBe(pool);
    expect(registry.audit.events().find((e) => e.kind === "provided")).toMatchObject({ tableKind: "record" });
    handle.dispose();
    expect(store.PoolLayer).toBeUndefined();
  });
});
