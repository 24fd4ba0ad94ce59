import { describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/registry.js";
import { thrown } from "../helpers.js";

class Op {}
class PoolLayer extends Op {}
class Im2Col extends Op {}

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

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
