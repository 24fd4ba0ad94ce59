import { describe, expect, it } from "vitest";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { Registration } from "../../src/registry/registration.js";
import { createRegistry, type Registry } from "../../src/registry/registry.js";
import { admit, type Request } from "../../src/registry/registry-input.js";
import { thrown } from "../helpers.js";

class Op {}
class PoolLayer extends Op {}
class Im2Col extends Op {}

const implNamed = (name: string) => Object.defineProperty(() => name, "name", { value: name });

/** What a registry holds, as comparable data: the report without event numbers. */
function state(registry: Registry) {
  return JSON.parse(JSON.stringify(registry.verify()));
}

class Pool {}

describe("conflicts", () => {
  it("refuses a second implementation for the same op type unless override is passed", () => {
    const registry = createRegistry();
    const first = registry.register("numba", PoolLayer, implNamed("first"));
    const before = state(registry);
    const error = thrown(() => registry.register("numba", PoolLayer, implNamed("second")));
    expect(error.code).toBe("ERR_DISPATCH_CONFLICT");
    expect(error.message).toContain("override: true");
    // The refusal is a registration of its own, refused: the audit fails on it, and nothing else changed.
    const report = registry.verify();
    expect(report.problems.map((p) => p.kind)).toEqual(["conflict"]);
    expect(report.registrations.slice(0, -1)).toEqual(before.registrations);
    expect(report.registrations.at(-1)).toMatchObject({ id: 1, op: "PoolLayer", state: "refused" });
    expect(first.state).toBe("pending");
  });

  it("a registration refused by a sealed backend did not land: a problem until restore() takes it back", () => {
    const registry = createRegistry();
    registry.provide("numba", new Dispatcher({ backend: "numba" }));
    const snapshot = registry.snapshot();
    registry.seal("numba");
    expect(thrown(() => registry.register("numba", PoolLayer, implNamed("late"))).code).toBe("ERR_DISPATCH_SEALED");
    const problems = registry.verify().problems;
    expect(problems.map((p) => p.kind)).toEqual(["failed"]);
    expect(problems[0]?.message).toContain("PoolLayer on numba (registered at unknown) was refused: The numba backend is sealed");
    registry.restore(snapshot);
    expect(registry.verify().ok).toBe(true);
  });

  it("a refused registration never comes back with restore(): not into a sealed backend, not behind the owner it conflicted with", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    registry.provide("numba", table);
    const owner = registry.register("numba", Im2Col, implNamed("owner"));
    registry.seal("numba");
    const before = registry.snapshot();
    expect(thrown(() => registry.register("numba", PoolLayer, implNamed("sealed out"))).code).toBe("ERR_DISPATCH_SEALED");
    const during = registry.snapshot();
    registry.restore(before);
    registry.restore(during);
    expect(table.has(PoolLayer)).toBe(false);
    const free = createRegistry();
    free.provide("numba", table);
    const kept = free.register("numba", PoolLayer, implNamed("kept"));
    const s0 = free.snapshot();
    expect(thrown(() => free.register("numba", PoolLayer, implNamed("refused"))).code).toBe("ERR_DISPATCH_CONFLICT");
    const s1 = free.snapshot();
    free.restore(s0);
    free.restore(s1);
    kept.dispose();
    expect(table.has(PoolLayer)).toBe(false);
    expect(owner.state).toBe("applied");
    free.dispose();
  });

  it("a second registration beside one that failed to apply says so, not that an implementation is there", () => {
    const registry = createRegistry();
    registry.provide("numba", {
      register() {
        throw new Error("read-only table");
      },
    });
    const failed = registry.register("numba", PoolLayer, implNamed("first"));
    expect(failed.state).toBe("failed");
    const error = thrown(() => registry.register("numba", PoolLayer, implNamed("second")));
    expect(error.code).toBe("ERR_DISPATCH_CONFLICT");
    expect(error.message).toContain("(registration #0), which failed to apply: dispose it first");
  });

  it("a refusal the caller caught is taken back by restore(), as a test harness needs, and fails the audit until then", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    registry.provide("numba", table);
    const first = implNamed("first");
    registry.register("numba", PoolLayer, first);
    const snapshot = registry.snapshot();
    expect(thrown(() => registry.register("numba", PoolLayer, implNamed("second"))).code).toBe("ERR_DISPATCH_CONFLICT");
    expect(registry.verify().problems.map((p) => p.kind)).toEqual(["conflict"]);
    registry.restore(snapshot);
    expect(registry.verify().ok).toBe(true);
    expect(table.get(PoolLayer)).toBe(first);
  });

  it("gives the same implementation registered twice its own handle: disposing one leaves the other in place", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    registry.provide("numba", table);
    const fn = implNamed("same");
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
    const fn = implNamed("same");
    registry.register("numba", PoolLayer, fn);
    registry.seal("numba");
    expect(thrown(() => registry.register("numba", PoolLayer, fn)).code).toBe("ERR_DISPATCH_SEALED");
  });

  it("supersedes with override, and reinstates the superseded one on dispose", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    registry.provide("numba", table);
    const first = registry.register("numba", PoolLayer, implNamed("first"));
    const second = registry.register("numba", PoolLayer, implNamed("second"), { override: true });
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
    const builtin = implNamed("builtin");
    table.register(PoolLayer, builtin);
    const handle = registry.register("numba", PoolLayer, implNamed("plugin"));
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
    registry.register("numba", PoolLayer, implNamed("pool"));
    registry.seal("numba");
    registry.seal("numba");
    expect(registry.isSealed("numba")).toBe(true);
    const error = thrown(() => registry.register("numba", Im2Col, implNamed("im2col")));
    expect(error.code).toBe("ERR_DISPATCH_SEALED");
    expect(error.message).toContain("sealed");
    expect(table.size).toBe(1);
    expect(registry.audit.events().filter((e) => e.kind === "refused")).toMatchObject([{ code: "ERR_DISPATCH_SEALED", op: "Im2Col" }]);
    // Other backends are unaffected.
    expect(registry.register("jax", Im2Col, implNamed("im2col")).state).toBe("pending");
  });
});

const impl = () => 1;
const request = (over: Partial<Request> = {}): Request => ({
  backend: "numba",
  opType: Pool,
  impl,
  override: false,
  origin: undefined,
  site: undefined,
  ...over,
});
const owner = (options: { impl?: () => unknown; override?: boolean; plugin?: string } = {}) => {
  const r = new Registration(7, "numba", Pool, "Pool", options.impl ?? (() => 2), options.override ?? false, () => {});
  if (options.plugin !== undefined) r.requested.origin = { plugin: options.plugin, module: "file:///p.js" };
  return r;
};

describe("admit", () => {
  it("takes an op type nobody holds, and one held when it overrides", () => {
    expect(admit(request(), false, undefined)).toEqual({ action: "take" });
    expect(admit(request({ override: true }), false, owner())).toEqual({ action: "take" });
  });

  it("refuses on a sealed backend, and a conflict without override, naming the holder", () => {
    expect(admit(request(), true, undefined)).toMatchObject({ action: "refuse", code: "ERR_DISPATCH_SEALED" });
    const conflict = admit(request(), false, owner({ plugin: "ml-ops" }));
    expect(conflict).toMatchObject({ action: "refuse", code: "ERR_DISPATCH_CONFLICT" });
    expect(conflict.action === "refuse" && conflict.message).toContain("registration #7, ml-ops's");
  });

  it("puts the same implementation, and a plugin's registration against an app's explicit override, behind the holder", () => {
    const holder = owner({ impl });
    expect(admit(request(), false, holder)).toEqual({ action: "wait", owner: holder, note: "the same implementation" });
    const app = owner({ override: true });
    const plugin = request({ origin: { plugin: "ml-ops", module: "file:///p.js" } });
    expect(admit(plugin, false, app)).toEqual({ action: "wait", owner: app, note: "the app's explicit override wins" });
  });
});
