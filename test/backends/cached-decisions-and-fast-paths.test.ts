import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { createFast } from "../../src/dispatchable/fast-call.js";
import { compileFront, WIDTH } from "../../src/dispatchable/front.js";
import { backendOptions, scopeHolder, type TraceEntry } from "../../src/dispatchable/options-scope.js";

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
