import { describe, expect, it } from "vitest";
import { type Class, Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry } from "../../src/registry/registry.js";

class Op {}
class PoolLayer extends Op {}
class Im2Col extends Op {}
class Col2Im extends Op {}

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

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
