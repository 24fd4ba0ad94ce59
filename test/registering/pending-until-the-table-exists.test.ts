import { describe, expect, it } from "vitest";
import { type Class, Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry, type Registry } from "../../src/registry/registry.js";
import { thrown } from "../helpers.js";

class Op {}
class PoolLayer extends Op {}
class Im2Col extends Op {}
class Col2Im extends Op {}

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

/** What a registry holds, as comparable data: the report without event numbers. */
function state(registry: Registry) {
  return JSON.parse(JSON.stringify(registry.verify()));
}

describe("deferred registration", () => {
  it("holds registrations until provide, then applies them in order", () => {
    const registry = createRegistry();
    const order: string[] = [];
    const table = {
      entries: new Map<Class, unknown>(),
      register(type: Class, fn: unknown) {
        order.push(type.name);
        this.entries.set(type, fn);
      },
    };
    const a = registry.register("numba", PoolLayer, impl("pool"));
    const b = registry.register("numba", Im2Col, impl("im2col"));
    expect(a.state).toBe("pending");
    expect(registry.pending("numba")).toEqual([a, b]);
    registry.provide("numba", table, { module: "file:///numba.js", via: "hook" });
    expect(order).toEqual(["PoolLayer", "Im2Col"]);
    expect(a.state).toBe("applied");
    expect(registry.pending()).toEqual([]);
    const applied = registry.audit.events().filter((e) => e.kind === "applied");
    expect(applied.map((e) => e.kind === "applied" && [e.op, e.mechanism, e.module])).toEqual([
      ["PoolLayer", "hook", "file:///numba.js"],
      ["Im2Col", "hook", "file:///numba.js"],
    ]);
  });

  it("applies at once after provide, and says so", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "jax" });
    registry.provide("jax", table);
    const handle = registry.register("jax", PoolLayer, impl("pool"));
    expect(handle.state).toBe("applied");
    expect(table.resolve(new PoolLayer())()).toBe("pool");
    const applied = registry.audit.events().find((e) => e.kind === "applied");
    expect(applied).toMatchObject({ mechanism: "immediate", op: "PoolLayer" });
  });

  it("records native provide as the native mechanism", () => {
    const registry = createRegistry();
    registry.register("mlx", PoolLayer, impl("pool"));
    registry.provide("mlx", new Map());
    expect(registry.verify().registrations[0]?.tables[0]?.mechanism).toBe("native");
  });

  it("applies a registration made while the table is being filled exactly once, after the current one", () => {
    const registry = createRegistry();
    const writes: string[] = [];
    const table = {
      entries: new Map<Class, unknown>(),
      register(type: Class, fn: unknown) {
        writes.push(type.name);
        this.entries.set(type, fn);
        // An impl whose registration registers its companion, while provide() is filling the table.
        if (type === PoolLayer) registry.register("numba", Col2Im, impl("col2im"));
      },
    };
    registry.register("numba", PoolLayer, impl("pool"));
    registry.register("numba", Im2Col, impl("im2col"));
    registry.provide("numba", table);
    expect(writes).toEqual(["PoolLayer", "Im2Col", "Col2Im"]);
    expect(table.entries.size).toBe(3);
    expect(registry.verify().registrations.map((r) => r.state)).toEqual(["applied", "applied", "applied"]);
  });
});

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

describe("conflicts", () => {
  it("refuses a second implementation for the same op type unless override is passed", () => {
    const registry = createRegistry();
    const first = registry.register("numba", PoolLayer, impl("first"));
    const before = state(registry);
    const error = thrown(() => registry.register("numba", PoolLayer, impl("second")));
    expect(error.code).toBe("ERR_DISPATCH_CONFLICT");
    expect(error.message).toContain("override: true");
    expect(registry.verify().problems.map((p) => p.kind)).toEqual(["conflict"]);
    expect(state(registry).registrations).toEqual(before.registrations);
    expect(first.state).toBe("pending");
  });

  it("gives the same implementation registered twice its own handle: disposing one leaves the other in place", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    registry.provide("numba", table);
    const fn = impl("same");
    const a = registry.register("numba", PoolLayer, fn);
    const b = registry.register("numba", PoolLayer, fn);
    expect(b).not.toBe(a);
    expect([a.state, b.state]).toEqual(["applied", "superseded"]);
    a.dispose();
    expect(table.resolve(new PoolLayer())).toBe(fn);
    expect(b.state).toBe("applied");
    b.dispose();
    expect(thrown(() => table.resolve(new PoolLayer())).code).toBe("ERR_DISPATCH_NO_IMPL");
    expect(registry.verify().problems).toEqual([]);
  });

  it("refuses even the same implementation again once the backend is sealed", () => {
    const registry = createRegistry();
    const fn = impl("same");
    registry.register("numba", PoolLayer, fn);
    registry.seal("numba");
    expect(thrown(() => registry.register("numba", PoolLayer, fn)).code).toBe("ERR_DISPATCH_SEALED");
  });

  it("supersedes with override, and reinstates the superseded one on dispose", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    registry.provide("numba", table);
    const first = registry.register("numba", PoolLayer, impl("first"));
    const second = registry.register("numba", PoolLayer, impl("second"), { override: true });
    expect(first.state).toBe("superseded");
    expect(table.resolve(PoolLayer)()).toBe("second");
    second.dispose();
    expect(first.state).toBe("applied");
    expect(table.resolve(PoolLayer)()).toBe("first");
    expect(registry.verify().registrations.map((r) => r.state)).toEqual(["applied", "disposed"]);
  });

  it("refuses to replace an implementation the framework put in the table, and audits it", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    const builtin = impl("builtin");
    table.register(PoolLayer, builtin);
    const handle = registry.register("numba", PoolLayer, impl("plugin"));
    registry.provide("numba", table);
    expect(table.get(PoolLayer)).toBe(builtin);
    expect(handle.state).toBe("refused");
    const report = registry.verify();
    expect(report.problems).toMatchObject([{ kind: "conflict", op: "PoolLayer" }]);
    expect(report.problems[0]?.message).toContain("that this registry did not put there");
  });
});

describe("seal", () => {
  it("refuses registrations after seal, with a code, and keeps what was there", () => {
    const registry = createRegistry();
    const table = new Map();
    registry.provide("numba", table);
    registry.register("numba", PoolLayer, impl("pool"));
    registry.seal("numba");
    registry.seal("numba");
    expect(registry.isSealed("numba")).toBe(true);
    const error = thrown(() => registry.register("numba", Im2Col, impl("im2col")));
    expect(error.code).toBe("ERR_DISPATCH_SEALED");
    expect(error.message).toContain("sealed");
    expect(table.size).toBe(1);
    expect(registry.audit.events().filter((e) => e.kind === "refused")).toMatchObject([{ code: "ERR_DISPATCH_SEALED", op: "Im2Col" }]);
    // Other backends are unaffected.
    expect(registry.register("jax", Im2Col, impl("im2col")).state).toBe("pending");
  });
});

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

describe("isolation", () => {
  it("keeps two registries independent", () => {
    const a = createRegistry();
    const b = createRegistry();
    const tableA = new Map();
    a.register("numba", PoolLayer, impl("a"));
    b.register("numba", Im2Col, impl("b"));
    a.provide("numba", tableA);
    expect([...tableA.keys()]).toEqual([PoolLayer]);
    expect(b.pending("numba")).toHaveLength(1);
    b.seal("numba");
    expect(a.isSealed("numba")).toBe(false);
    a.dispose();
    expect(tableA.size).toBe(0);
    expect(b.pending("numba")).toHaveLength(1);
  });

  it("refuses calls on a disposed registry but keeps its audit readable", () => {
    const registry = createRegistry();
    registry.register("numba", PoolLayer, impl("pool"));
    registry[Symbol.dispose]();
    registry.dispose();
    expect(thrown(() => registry.register("numba", Im2Col, impl("x"))).code).toBe("ERR_DISPATCH_REGISTRY_DISPOSED");
    expect(registry.verify().registrations[0]?.state).toBe("disposed");
  });
});

describe("bad input", () => {
  const cases: Array<[string, string, (r: Registry) => unknown]> = [
    ["empty backend", "ERR_DISPATCH_INVALID_BACKEND", (r) => r.register("", PoolLayer, impl("x"))],
    ["numeric backend", "ERR_DISPATCH_INVALID_BACKEND", (r) => r.register(1 as never, PoolLayer, impl("x"))],
    ["__proto__ backend", "ERR_DISPATCH_RESERVED_NAME", (r) => r.register("__proto__", PoolLayer, impl("x"))],
    ["constructor backend", "ERR_DISPATCH_RESERVED_NAME", (r) => r.provide("constructor", new Map())],
    ["prototype backend", "ERR_DISPATCH_RESERVED_NAME", (r) => r.seal("prototype")],
    ["op type not a class", "ERR_DISPATCH_INVALID_OP_TYPE", (r) => r.register("numba", "PoolLayer" as never, impl("x"))],
    ["arrow op type", "ERR_DISPATCH_INVALID_OP_TYPE", (r) => r.register("numba", (() => {}) as never, impl("x"))],
    ["impl not a function", "ERR_DISPATCH_INVALID_IMPL", (r) => r.register("numba", PoolLayer, {} as never)],
    ["unknown option", "ERR_DISPATCH_INVALID_OPTION", (r) => r.register("numba", PoolLayer, impl("x"), { overide: true } as never)],
    ["override not boolean", "ERR_DISPATCH_INVALID_OPTION", (r) => r.register("numba", PoolLayer, impl("x"), { override: "yes" } as never)],
    ["options not an object", "ERR_DISPATCH_INVALID_OPTION", (r) => r.register("numba", PoolLayer, impl("x"), 3 as never)],
    ["table of unknown shape", "ERR_DISPATCH_TABLE_SHAPE", (r) => r.provide("numba", { set() {} })],
    ["null table", "ERR_DISPATCH_TABLE_SHAPE", (r) => r.provide("numba", null)],
    ["unknown provide meta", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), { url: "x" } as never)],
    ["bad via", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), { via: "magic" } as never)],
    ["bad module", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), { module: 1 } as never)],
    ["bad adapter", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), { adapter: { set() {} } } as never)],
    ["bad expect", "ERR_DISPATCH_INVALID_OPTION", (r) => r.expect("numba", [1] as never)],
    ["bad expect source", "ERR_DISPATCH_INVALID_OPTION", (r) => r.expect("numba", ["PoolLayer"], 1 as never)],
    ["bad declare", "ERR_DISPATCH_INVALID_OPTION", (r) => r.declare("numba", { adaptor: {} } as never)],
    ["bad registry option", "ERR_DISPATCH_INVALID_OPTION", () => createRegistry({ callsites: false } as never)],
    ["bad callSites", "ERR_DISPATCH_INVALID_OPTION", () => createRegistry({ callSites: 1 } as never)],
  ];

  // What each refusal's message must say, beyond its code.
  const explains: Record<string, RegExp> = {
    ERR_DISPATCH_INVALID_BACKEND: /backend must be a non-empty string|cannot be a backend name/,
    ERR_DISPATCH_RESERVED_NAME: /names a property of every object/,
    ERR_DISPATCH_INVALID_OP_TYPE: /class/,
    ERR_DISPATCH_INVALID_IMPL: /function/,
    ERR_DISPATCH_INVALID_OPTION: /option|must be|expected|needs/i,
    ERR_DISPATCH_TABLE_SHAPE: /table/,
  };
  for (const [label, code, call] of cases) {
    it(`refuses ${label} with ${code} and changes nothing`, () => {
      const registry = createRegistry();
      const table = new Map();
      registry.register("numba", Im2Col, impl("im2col"));
      registry.provide("numba", table);
      registry.register("jax", Im2Col, impl("im2col"));
      const before = state(registry);
      const error = thrown(() => call(registry));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(explains[code] as RegExp);
      expect(state(registry)).toEqual(before);
      expect([...table.keys()]).toEqual([Im2Col]);
      expect(Object.prototype).not.toHaveProperty("numba");
    });
  }
});

describe("the miss error, with a registry behind it", () => {
  it("names the pending registrations and says the loader is missing", () => {
    // A class of its own: other tests' registries are still alive in this thread.
    class LonelyOp extends Op {}
    const registry = createRegistry({ callSites: true });
    const table = new Dispatcher({ name: "numbaFuncify", backend: "numba" });
    registry.register("numba", LonelyOp, impl("lonely"));
    const error = thrown(() => table.resolve(new LonelyOp()));
    expect(error.code).toBe("ERR_DISPATCH_NO_IMPL");
    expect(error.message).toMatch(/LonelyOp on numba \(registration #0, from test\/registry\/registry\.test\.ts:\d+\) is pending/);
    // Under Vitest (as here), the miss names the Vitest plugin; elsewhere, the loader.
    expect(error.message).toContain("no dispatch-hook adapter is installed in this Vitest run");
    expect(error.message).toContain("Add plugins: [dispatchHook()]");
    const globals = globalThis as { __vitest_worker__?: unknown };
    const worker = globals.__vitest_worker__;
    delete globals.__vitest_worker__;
    try {
      const plain = thrown(() => table.resolve(new LonelyOp())).message;
      expect(plain).toContain("the dispatch-hook loader is not installed");
      expect(plain).toContain("--import dispatch-hook/loader.mjs");
    } finally {
      globals.__vitest_worker__ = worker;
    }
    registry.dispose();
    expect(thrown(() => table.resolve(new LonelyOp())).message).not.toContain("pending");
  });

  it("says when the table that missed is another module instance than the one provided", () => {
    const registry = createRegistry();
    const provided = new Dispatcher({ backend: "numba" });
    const other = new Dispatcher({ backend: "numba" });
    registry.provide("numba", provided, { module: "file:///a/basic.js" });
    registry.register("numba", PoolLayer, impl("pool"));
    const error = thrown(() => other.resolve(new PoolLayer()));
    expect(error.message).toContain("was applied to file:///a/basic.js, but not to this table");
    registry.dispose();
  });

  it("names a failed registration", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    const broken = {
      register: () => {
        throw new Error("boom");
      },
    };
    registry.register("numba", PoolLayer, impl("pool"));
    registry.provide("numba", broken);
    expect(thrown(() => table.resolve(PoolLayer)).message).toContain("failed to apply");
    registry.dispose();
  });
});

describe("call sites", () => {
  it("records where each registration was made while an audit runs, or when asked to; 'unknown' otherwise", () => {
    const on = createRegistry({ callSites: true });
    on.register("numba", PoolLayer, impl("pool"));
    expect(on.verify().registrations[0]?.site).toMatch(/^test\/registry\/registry\.test\.ts:\d+$/);
    const off = createRegistry({ callSites: false });
    off.register("numba", PoolLayer, impl("pool"));
    expect(off.verify().registrations[0]?.site).toBe("unknown");
    const saved = { audit: process.env.DISPATCH_HOOK_AUDIT, file: process.env.DISPATCH_HOOK_AUDIT_DIR };
    try {
      delete process.env.DISPATCH_HOOK_AUDIT;
      delete process.env.DISPATCH_HOOK_AUDIT_DIR;
      const quiet = createRegistry();
      quiet.register("numba", PoolLayer, impl("pool"));
      expect(quiet.verify().registrations[0]?.site).toBe("unknown");
      process.env.DISPATCH_HOOK_AUDIT = "report";
      const audited = createRegistry();
      audited.register("numba", PoolLayer, impl("pool"));
      expect(audited.verify().registrations[0]?.site).toMatch(/^test\/registry\/registry\.test\.ts:\d+$/);
    } finally {
      for (const [key, value] of [
        ["DISPATCH_HOOK_AUDIT", saved.audit],
        ["DISPATCH_HOOK_AUDIT_DIR", saved.file],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
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
