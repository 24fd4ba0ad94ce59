import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { createCaller } from "../../src/dispatchable/call-path.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { createFast } from "../../src/dispatchable/fast-call.js";
import { compileFront, WIDTH } from "../../src/dispatchable/front.js";
import { backendOptions, scopeHolder, type TraceEntry } from "../../src/dispatchable/options-scope.js";
import { WeakCache } from "../../src/dispatchable/weak-cache.js";

class Jax {
  v = 1;
}
class Cupy {
  v = 2;
}

function setup() {
  const backends = createBackends({ name: `front-${Math.random()}`, discover: false, env: {} });
  backends.declare({ name: "jax", primaryTypes: [Jax], implementations: { f: (x: unknown) => `jax ${kind(x)}` } });
  backends.declare({ name: "cupy", primaryTypes: [Cupy], implementations: { f: (x: unknown) => `cupy ${kind(x)}` } });
  const f = dispatchable((x: unknown) => `default ${kind(x)}`, { name: "f", args: [0], backends });
  return { backends, f };
}
/** The value's class name as its prototype tells it, or its typeof. */
const kind = (x: unknown) => (typeof x === "object" && x !== null ? (Object.getPrototypeOf(x)?.constructor?.name ?? "bare") : typeof x);

class JaxArray {}
class CupyArray {}

function callPath(arity: number, indices: number[] | undefined, relevant?: (args: unknown[]) => unknown[]) {
  const set = createBackends({ name: `call-path-${arity}`, discover: false });
  set.declare({
    name: "jax",
    primaryTypes: [JaxArray],
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

describe("the compiled front", () => {
  it("answers from the prototype, never from the constructor hint alone", () => {
    const { f } = setup();
    expect(f(new Jax())).toBe("jax Jax");
    expect(f(new Jax())).toBe("jax Jax");
    // An object that claims Jax's constructor but is a Cupy: the prototype decides.
    const liar = Object.assign(new Cupy(), { constructor: Jax });
    expect(f(liar)).toBe("cupy Cupy");
    expect(f(liar)).toBe("cupy Cupy");
    expect(f(new Jax())).toBe("jax Jax");
  });

  it("keeps exact types apart when the hint is inherited (a subclass a backend declares)", () => {
    const backends = createBackends({ name: "front-sub", discover: false, env: {} });
    class Base {}
    function Sub() {}
    Sub.prototype = Object.create(Base.prototype); // constructor stays Base
    backends.declare({ name: "base", primaryTypes: [Base], implementations: { g: () => "base" } });
    backends.declare({ name: "sub", primaryTypes: [Sub], implementations: { g: () => "sub" }, higherPriorityThan: ["base"] });
    const g = dispatchable((_x: unknown) => "default", { name: "g", args: [0], backends });
    const sub = new (Sub as unknown as new () => object)();
    expect(g(new Base())).toBe("base");
    expect(g(new Base())).toBe("base");
    expect(g(sub)).toBe("sub");
    expect(g(new Base())).toBe("base");
    expect(g(sub)).toBe("sub");
  });

  it("serves more types than the chain tries, and primitives and null-prototype objects, through the fast and general paths", () => {
    const { backends, f } = setup();
    const classes = Array.from({ length: WIDTH[0] + 2 }, (_, i) => ({ [`K${i}`]: class extends Jax {} })[`K${i}`] as typeof Jax);
    for (let round = 0; round < 3; round++) {
      for (const K of classes) expect(f(new K())).toMatch(/^jax K\d$/);
      expect(f(new Cupy())).toBe("cupy Cupy");
      expect(f(Object.create(null))).toBe("default bare");
      expect(f(3)).toBe("default number");
    }
    // Many rounds later answers stay right, and a workload that settles on one type is still answered.
    for (let round = 0; round < 50; round++) for (const K of classes) expect(f(new K())).toMatch(/^jax K\d$/);
    for (let i = 0; i < 40; i++) expect(f(new Cupy())).toBe("cupy Cupy");
    // A declaration changes the version: remembered decisions are dropped.
    backends.declare({ name: "late", primaryTypes: [Jax], implementations: { f: () => "late" }, higherPriorityThan: ["jax"] });
    expect(f(new Jax())).toBe("late");
  });

  it("passes `this` to an implementation that reads it, and answers arrows called as methods", () => {
    const backends = createBackends({ name: "front-this", discover: false, env: {} });
    backends.declare({
      name: "jax",
      primaryTypes: [Jax],
      implementations: {
        method(this: { tag?: string } | undefined, _x: unknown) {
          return `method ${this?.tag}`;
        },
        arrow: (_x: unknown) => "arrow",
      },
    });
    const lib = {
      tag: "lib",
      method: dispatchable((_x: unknown) => "default", { name: "method", args: [0], backends }),
      arrow: dispatchable((_x: unknown) => "default", { name: "arrow", args: [0], backends }),
    };
    const detached = lib.method;
    for (let i = 0; i < 3; i++) {
      expect(lib.method(new Jax())).toBe("method lib");
      expect(lib.method.call({ tag: "other" }, new Jax())).toBe("method other");
      expect(detached(new Jax())).toBe("method undefined");
      expect(lib.arrow(new Jax())).toBe("arrow");
    }
  });

  it("inside scopes: decisions are kept per scope key, shared by scopes with equal options, and a traced scope is never answered without its trace", () => {
    const { f } = setup();
    const calls = (n: number) => Array.from({ length: n }, () => f(new Jax()));
    backendOptions({ disable: ["jax"] }, () => expect(calls(3)).toEqual(["default Jax", "default Jax", "default Jax"]));
    expect(calls(2)).toEqual(["jax Jax", "jax Jax"]);
    backendOptions({ disable: ["jax"] }, () => expect(calls(2)).toEqual(["default Jax", "default Jax"]));
    const trace: TraceEntry[] = [];
    backendOptions({ disable: ["jax"], trace }, () => calls(4));
    expect(trace.map((t) => t.ran)).toEqual(["default", "default", "default", "default"]);
    expect(calls(1)).toEqual(["jax Jax"]);
  });

  it("answers from the fast path's tables by class index, and hands every call it cannot tell to the next", () => {
    let version = 1;
    const holder = scopeHolder();
    const nextCalls: unknown[][] = [];
    const fast = createFast({
      indices: [1],
      set: {
        get version() {
          return version;
        },
        classifier: () => undefined,
      },
      holder,
      slow: () => "slow",
    });
    const state = fast.state;
    Object.assign(state, { version: 1, tests: [Jax.prototype, Cupy.prototype], exact: 0, width: 4, number: 2, plain: [] });
    const front = compileFront({
      name: "weird name\n}); throw 1; //",
      arity: 2,
      indices: [1],
      set: {
        get version() {
          return version;
        },
      },
      holder,
      state,
      tableFor: fast.tableFor,
      next: (...args: unknown[]) => {
        nextCalls.push(args);
        return "next";
      },
    });
    if (front === undefined) throw new Error("code generation is allowed here");
    const jax = new Jax();
    expect(front("a", jax)).toBe("next");
    state.plain[0] = (a: unknown, b: unknown) => `jax ${a} ${b === jax}`;
    state.plain[2] = () => "none";
    expect(front("a", jax)).toBe("jax a true");
    expect(front("a", new Cupy())).toBe("next");
    expect(front("a", {})).toBe("none");
    expect(front("a", jax, "extra")).toBe("next");
    expect(front("a", 3)).toBe("next");
    expect(front.call({}, "a", jax)).toBe("next");
    // A class declared exactly, and more classes than the chain tries, go to the next.
    state.exact = 1;
    expect(front("a", jax)).toBe("next");
    state.exact = 0;
    state.tests = Array.from({ length: WIDTH[0] + 1 }, () => ({}));
    expect(front("a", jax)).toBe("next");
    state.tests = [Jax.prototype];
    version = 2;
    expect(front("a", jax)).toBe("next");
    expect(nextCalls).toHaveLength(8);
    expect(String(front)).toContain("function dispatchable(a, b)");
  });

  it("keys many classes by index: subclasses share their declared ancestor's decision, primitives their wrapper's", () => {
    const backends = createBackends({ name: "front-many", discover: false, env: {} });
    const classes = Array.from({ length: 8 }, (_, i) => ({ [`K${i}`]: class {} })[`K${i}`] as new () => object);
    classes.forEach((K, i) => {
      backends.declare({ name: `b${i}`, primaryTypes: [K], secondaryTypes: [Number], implementations: { f: () => `b${i}` } });
    });
    const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends });
    for (let round = 0; round < 3; round++) {
      classes.forEach((K, i) => {
        expect(f(new K())).toBe(`b${i}`);
        expect(f(new (class extends K {})())).toBe(`b${i}`);
      });
      expect(f(3)).toBe("default");
      expect(f(null)).toBe("default");
    }
  });

  it("works where code generation from strings is disallowed, through the general path", () => {
    const script = `
      const { createBackends, dispatchable } = await import(${JSON.stringify(fileURLToPath(new URL("../../dist/index.js", import.meta.url)))});
      class Jax {}
      const backends = createBackends({ name: "no-eval", discover: false, env: {} });
      backends.declare({ name: "jax", primaryTypes: [Jax], implementations: { f: (x) => "jax" } });
      const f = dispatchable((x) => "default", { name: "f", args: [0], backends });
      let threw = false;
      try { new Function("return 1"); } catch { threw = true; }
      console.log(JSON.stringify({ threw, out: [f(new Jax()), f(new Jax()), f(1)] }));`;
    const run = spawnSync(process.execPath, ["--disallow-code-generation-from-strings", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ threw: true, out: ["jax", "jax", "default"] });
  });
});

describe("the call path", () => {
  for (const arity of [1, 2, 3, 4]) {
    it(`a function of ${arity} parameter${arity === 1 ? "" : "s"}: by-name and general paths agree, extra and missing arguments included`, () => {
      const { call } = callPath(arity, [0]);
      const full = Array.from({ length: arity }, (_, i) => (i === 0 ? new JaxArray() : i));
      expect(call(...full)).toBe(`jax ${arity}`);
      expect(call(...full)).toBe(`jax ${arity}`);
      expect(call(new CupyArray(), ...full.slice(1))).toBe(`default ${arity}`);
      // Fewer or more arguments than parameters reach the implementation exactly as given.
      expect(call(new JaxArray())).toBe("jax 1");
      expect(call(...full, "extra")).toBe(`jax ${arity + 1}`);
      expect(call(new JaxArray(), ...full.slice(1))).toBe(`jax ${arity}`);
    });
  }

  it("two relevant arguments: the last decision is used only for the same pair of types", () => {
    const { call } = callPath(2, [0, 1]);
    expect(call(new JaxArray(), 1)).toBe("jax 2");
    expect(call(new JaxArray(), 1)).toBe("jax 2");
    expect(call(1, 1)).toBe("default 2");
    // A JaxArray with a type jax does not take: the JaxArray is not handed to the default to convert.
    expect(() => call(new JaxArray(), new CupyArray())).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_MIXED_INPUTS" }));
  });

  it("more relevant arguments, picked by a function, use the trie; lengths are told apart", () => {
    const { call } = callPath(1, undefined, (args) => args[0] as unknown[]);
    expect(call([new JaxArray(), 1])).toBe("jax 1");
    expect(call([new JaxArray(), 1, 2])).toBe("jax 1");
    expect(call([1, 2])).toBe("default 1");
    expect(() => call([new JaxArray(), new CupyArray()])).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_MIXED_INPUTS" }));
    expect(call([new CupyArray(), new CupyArray()])).toBe("default 1");
  });

  it("inside a scope: the scope's own cache, and a trace for every call even when the decision is cached", () => {
    const { set, call } = callPath(1, [0]);
    set.declare({ name: "cupy", primaryTypes: [JaxArray], requiresOptIn: true, implementations: { f: () => "cupy" } });
    expect(call(new JaxArray())).toBe("jax 1");
    const trace: TraceEntry[] = [];
    backendOptions({ prioritize: ["cupy"], trace }, () => {
      expect(call(new JaxArray())).toBe("cupy");
      expect(call(new JaxArray())).toBe("cupy");
    });
    expect(trace.map((t) => t.ran)).toEqual(["cupy", "cupy"]);
    // Outside the scope again, the last decision outside scopes still holds.
    expect(call(new JaxArray())).toBe("jax 1");
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
