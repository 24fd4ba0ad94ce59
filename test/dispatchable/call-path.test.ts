import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { createCaller } from "../../src/dispatchable/call-path.js";
import { backendOptions, type TraceEntry } from "../../src/dispatchable/options-scope.js";
import { WeakCache } from "../../src/dispatchable/weak-cache.js";

class Jax {}
class Cupy {}

function setup(arity: number, indices: number[] | undefined, relevant?: (args: unknown[]) => unknown[]) {
  const set = createBackends({ name: `call-path-${arity}`, discover: false });
  set.declare({
    name: "jax",
    primaryTypes: [Jax],
    secondaryTypes: [Number],
    implementations: { f: (...args: unknown[]) => `jax ${args.length}` },
  });
  const params = Array.from({ length: arity }, (_, i) => `p${i}`);
  // A default implementation with exactly `arity` parameters, which decides the by-name path.
  const defaultImpl = new Function(...params, "return 'default ' + arguments.length;") as (...a: unknown[]) => unknown;
  const caller = createCaller({
    name: "f",
    op: set.opFor("f"),
    set,
    defaultImpl,
    indices,
    relevant: relevant ?? ((args) => (indices ?? []).map((i) => args[i])),
    labelsFor: (n) => Array.from({ length: n }, (_, i) => `argument ${i}`),
  });
  return { set, call: caller.call };
}

describe("the call path", () => {
  for (const arity of [1, 2, 3, 4]) {
    it(`a function of ${arity} parameter${arity === 1 ? "" : "s"}: by-name and general paths agree, extra and missing arguments included`, () => {
      const { call } = setup(arity, [0]);
      const full = Array.from({ length: arity }, (_, i) => (i === 0 ? new Jax() : i));
      expect(call(...full)).toBe(`jax ${arity}`);
      expect(call(...full)).toBe(`jax ${arity}`);
      expect(call(new Cupy(), ...full.slice(1))).toBe(`default ${arity}`);
      // Fewer or more arguments than parameters reach the implementation exactly as given.
      expect(call(new Jax())).toBe("jax 1");
      expect(call(...full, "extra")).toBe(`jax ${arity + 1}`);
      expect(call(new Jax(), ...full.slice(1))).toBe(`jax ${arity}`);
    });
  }

  it("two relevant arguments: the last decision is used only for the same pair of types", () => {
    const { call } = setup(2, [0, 1]);
    expect(call(new Jax(), 1)).toBe("jax 2");
    expect(call(new Jax(), 1)).toBe("jax 2");
    expect(call(1, 1)).toBe("default 2");
    // A Jax with a type jax does not take: the Jax is not handed to the default to convert.
    expect(() => call(new Jax(), new Cupy())).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_MIXED_INPUTS" }));
  });

  it("more relevant arguments, picked by a function, use the trie; lengths are told apart", () => {
    const { call } = setup(1, undefined, (args) => args[0] as unknown[]);
    expect(call([new Jax(), 1])).toBe("jax 1");
    expect(call([new Jax(), 1, 2])).toBe("jax 1");
    expect(call([1, 2])).toBe("default 1");
    expect(() => call([new Jax(), new Cupy()])).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_MIXED_INPUTS" }));
    expect(call([new Cupy(), new Cupy()])).toBe("default 1");
  });

  it("inside a scope: the scope's own cache, and a trace for every call even when the decision is cached", () => {
    const { set, call } = setup(1, [0]);
    set.declare({ name: "cupy", primaryTypes: [Jax], requiresOptIn: true, implementations: { f: () => "cupy" } });
    expect(call(new Jax())).toBe("jax 1");
    const trace: TraceEntry[] = [];
    backendOptions({ prioritize: ["cupy"], trace }, () => {
      expect(call(new Jax())).toBe("cupy");
      expect(call(new Jax())).toBe("cupy");
    });
    expect(trace.map((t) => t.ran)).toEqual(["cupy", "cupy"]);
    // Outside the scope again, the last decision outside scopes still holds.
    expect(call(new Jax())).toBe("jax 1");
  });
});

describe("WeakCache", () => {
  it("holds keys weakly, starts over after CAPACITY new keys, and keeps null apart", () => {
    const cache = new WeakCache<number>();
    const keys = Array.from({ length: WeakCache.CAPACITY + 1 }, () => ({}));
    keys.forEach((k, i) => {
      cache.set(k, i);
    });
    cache.set(null, -1);
    expect(cache.get(keys[0] as object)).toBeUndefined();
    expect(cache.get(keys[WeakCache.CAPACITY] as object)).toBe(WeakCache.CAPACITY);
    expect(cache.get(null)).toBe(-1);
  });
});
