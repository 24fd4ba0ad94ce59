import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { compileFront, forget, ignoresThis, remember, WAYS } from "../../src/dispatchable/front.js";
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

  it("serves more types than it remembers, and primitives and null-prototype objects, through the slow path", () => {
    const { backends, f } = setup();
    const classes = Array.from({ length: WAYS + 2 }, (_, i) => ({ [`K${i}`]: class extends Jax {} })[`K${i}`] as typeof Jax);
    for (let round = 0; round < 3; round++) {
      for (const K of classes) expect(f(new K())).toMatch(/^jax K\d$/);
      expect(f(new Cupy())).toBe("cupy Cupy");
      expect(f(Object.create(null))).toBe("default bare");
      expect(f(3)).toBe("default number");
    }
    // Long past the point where the front stops remembering every miss, answers stay right, and a
    // workload that settles on one type is still answered.
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

  it("reads each piece of state the slow path writes, and forgets on a new version", () => {
    let version = 1;
    const holder = scopeHolder();
    const slowCalls: unknown[][] = [];
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
      slow: (...args: unknown[]) => {
        slowCalls.push(args);
        return "slow";
      },
    });
    if (front === undefined) throw new Error("code generation is allowed here");
    const jax = new Jax();
    expect(front.call("a", jax)).toBe("slow");
    forget(front.recent, 1);
    remember(front.recent, [jax], undefined, (a: unknown, b: unknown) => `fast ${a} ${b === jax}`);
    expect(front.call("a", jax)).toBe("fast a true");
    expect(front.call("a", jax, "extra")).toBe("slow");
    expect(front.call("a", new Cupy())).toBe("slow");
    version = 2;
    expect(front.call("a", jax)).toBe("slow");
    expect(slowCalls).toHaveLength(4);
    expect(String(front.call)).toContain("function dispatchable(a, b)");
  });

  it("tells functions that ignore `this` from those that may read it", () => {
    expect(ignoresThis((x: unknown) => x)).toBe(true);
    expect(ignoresThis(async (x: unknown) => x)).toBe(true);
    expect(ignoresThis(function named(this: unknown) {}.bind(null))).toBe(true);
    expect(ignoresThis(function named() {})).toBe(false);
    expect(ignoresThis({ m() {} }.m)).toBe(false);
    expect(ignoresThis({ async m() {} }.m)).toBe(false);
    expect(ignoresThis(Math.max)).toBe(false);
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
