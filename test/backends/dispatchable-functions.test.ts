import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable, parameterNames } from "../../src/dispatchable/dispatchable.js";
import type { CallContext } from "../../src/dispatchable/impl-table.js";
import { backendOptions, type TraceEntry } from "../../src/dispatchable/options-scope.js";
import { referenceCheck } from "../../src/dispatchable/reference-check.js";

// The SciPy use case in JS terms: a NumPy-like default over plain arrays and numbers; JAX-like
// arrays that share no base class, matched through a protocol; an opt-in CuPy-like backend.
class JaxArray {
  constructor(readonly data: number[]) {}
  __jax_array__() {}
}
class TracedArray {
  constructor(readonly data: number[]) {}
  __jax_array__() {}
}
class CupyArray {
  constructor(readonly data: number[]) {}
}
const JaxLike = {
  name: "JaxLike",
  [Symbol.hasInstance]: (v: unknown) => typeof (v as { __jax_array__?: unknown })?.__jax_array__ === "function",
};
const values = (x: unknown): number[] => (typeof x === "number" ? [x] : Array.isArray(x) ? x : (x as { data: number[] }).data);

function numlike(env: Record<string, string> = {}) {
  const backends = createBackends({ name: "numlike", discover: false, env });
  backends.declare({
    name: "jax",
    primaryTypes: [JaxLike],
    secondaryTypes: [Number, Array],
    implementations: { add: (x: unknown, y: unknown) => new JaxArray(values(x).map((v, i) => v + (values(y)[i] ?? values(y)[0] ?? 0))) },
  });
  backends.declare({
    name: "cupy",
    primaryTypes: [CupyArray],
    secondaryTypes: [Number],
    requiresOptIn: true,
    higherPriorityThan: ["jax"],
    implementations: { add: () => "cupy add" },
  });
  const add = dispatchable(
    function add(x: unknown, y: unknown): unknown {
      return values(x).map((v, i) => v + (values(y)[i] ?? values(y)[0] ?? 0));
    },
    { args: ["x", "y"], backends },
  );
  const concatenate = dispatchable((arrays: unknown[]): unknown => arrays.flatMap(values), {
    name: "concatenate",
    args: (arrays: unknown[]) => arrays,
    backends,
  });
  backends.register("jax", concatenate, (arrays: unknown[]) => new JaxArray(arrays.flatMap(values)));
  return { backends, add, concatenate };
}

describe("dispatchable", () => {
  it("runs the default for types no backend claims, and a backend for its own types, protocols included", () => {
    const { add } = numlike();
    expect(add([1, 2], 1)).toEqual([2, 3]);
    expect(add(new JaxArray([1, 2]), 1)).toEqual(new JaxArray([2, 3]));
    // Arrays that share no base class with JaxArray, matched by the protocol; a plain array is a secondary type.
    expect(add(new TracedArray([1]), [5])).toEqual(new JaxArray([6]));
  });

  it("runs an opt-in backend only when prioritized, by scope or by the environment", () => {
    const { add } = numlike();
    // Not prioritized: the opt-in backend is passed over, and the default runs.
    expect(add(new CupyArray([1]), 1)).toEqual([2]);
    expect(backendOptions({ prioritize: ["cupy"] }, () => add(new CupyArray([1]), 1))).toBe("cupy add");
    expect(numlike({ NUMLIKE_PRIORITIZE: "cupy" }).add(new CupyArray([1]), 1)).toBe("cupy add");
  });

  it("fails fast on mixed inputs, and never converts them", () => {
    const { add, concatenate } = numlike();
    const scoped = () => backendOptions({ prioritize: ["cupy"] }, () => add(new JaxArray([1]), new CupyArray([2])));
    expect(scoped).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_MIXED_INPUTS" }));
    expect(scoped).toThrow(/argument x is JaxArray \(a type of jax\); argument y is CupyArray \(a type of cupy\)/);
    // Relevant arguments picked by a function: every element of the list.
    expect(concatenate([new JaxArray([1]), [2]])).toEqual(new JaxArray([1, 2]));
    expect(() => concatenate([new JaxArray([1]), new CupyArray([2])])).toThrow(/element 0 is JaxArray .*element 1 is CupyArray/);
  });

  it("honours the environment: a blocked backend is passed over, SET_ORDER reorders, a bad value warns and is ignored", () => {
    expect(numlike({ NUMLIKE_BLOCK: "jax" }).add(new JaxArray([1]), 1)).toEqual([2]);
    const reordered = numlike({ NUMLIKE_SET_ORDER: "jax>cupy" }).backends;
    expect(reordered.backends().map((b) => b.name)).toEqual(["jax", "cupy"]);
    expect(
      numlike()
        .backends.backends()
        .map((b) => b.name),
    ).toEqual(["cupy", "jax"]);
  });

  it("an invalid value in the environment fails the call with a code naming the variable, the backend and the function; nothing is lost", () => {
    const env: Record<string, string> = { NUMLIKE_PRIORITIZE: "cupyy" };
    const { add } = numlike(env);
    const x = new JaxArray([1]);
    expect(() => add(x, 1)).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_UNKNOWN_BACKEND",
        message: expect.stringMatching(
          /^add\(\): NUMLIKE_PRIORITIZE="cupyy" names the backend "cupyy", which numlike does not declare \(did you mean "cupy"\?\)/,
        ),
        details: expect.objectContaining({ backend: "cupyy", function: "add", variable: "NUMLIKE_PRIORITIZE", set: "numlike" }),
      }),
    );
    for (const [variable, value, code] of [
      ["NUMLIKE_BLOCK", "jax,tpu", "ERR_DISPATCH_UNKNOWN_BACKEND"],
      ["NUMLIKE_SET_ORDER", "jax>tpu", "ERR_DISPATCH_UNKNOWN_BACKEND"],
      ["NUMLIKE_SET_ORDER", "jax>>cupy", "ERR_DISPATCH_INVALID_OPTION"],
    ] as const) {
      expect(() => numlike({ [variable]: value }).add(x, 1), `${variable}=${value}`).toThrow(
        expect.objectContaining({ code, message: expect.stringContaining(`add(): ${variable}=${JSON.stringify(value)}`) }),
      );
    }
    // Corrected, the same set answers: every declaration and registration is still there.
    env.NUMLIKE_PRIORITIZE = "cupy";
    expect(add(new CupyArray([1]), 1)).toBe("cupy add");
    expect(add(x, 1)).toEqual(new JaxArray([2]));
  });

  it("refuses a declaration whose priorities close a cycle, and keeps the backends it had", () => {
    const { backends } = numlike();
    expect(() => backends.declare({ name: "tpu", higherPriorityThan: ["cupy"], lowerPriorityThan: ["jax"] })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_PRIORITY_CYCLE", message: expect.stringContaining("tpu higherPriorityThan cupy") }),
    );
    expect(backends.backends().map((b) => b.name)).toEqual(["cupy", "jax"]);
  });

  it("traces every call: who ran, who was skipped and why, shouldRun vetoes included", () => {
    const { add, backends } = numlike();
    const veto = Object.assign((x: unknown) => `small ${String(values(x).length)}`, {
      shouldRun: (_ctx: unknown, x: unknown) => values(x).length < 3,
    });
    backends.declare({
      name: "small",
      primaryTypes: [JaxLike],
      secondaryTypes: [Number],
      higherPriorityThan: ["jax"],
      implementations: { add: veto },
    });
    const trace: TraceEntry[] = [];
    backendOptions({ trace }, () => {
      add(new JaxArray([1, 2]), 1);
      add(new JaxArray([1, 2, 3]), 1);
      add([1], 1);
    });
    expect(trace.map((t) => t.ran)).toEqual(["small", "jax", "default"]);
    expect(trace[1]?.skipped).toContainEqual({ backend: "small", reason: "its shouldRun() returned false for this call" });
    expect(trace[1]?.types).toEqual(["JaxArray", "Number"]);
    expect(trace[2]?.skipped).toContainEqual({ backend: "jax", reason: "none of the arguments is one of its primary types" });
    expect(add.resolve(new JaxArray([1, 2, 3]), 1)).toMatchObject({ backend: "jax" });
  });

  it("resolves without calling, and documents itself", () => {
    const { add, backends } = numlike();
    expect(add.resolve([1], 1)).toMatchObject({ backend: "default", implementation: "add" });
    expect(backends.docs("add")).toContain("add() [numlike]: dispatches on x, y");
    expect(backends.docs("add")).toContain("1. cupy (requires opt-in)");
    expect(add.name).toBe("add");
  });

  it("refuses bad options with codes", () => {
    const { backends } = numlike();
    expect(() => dispatchable((a: number) => a, { args: ["b"], backends })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }),
    );
    expect(() => dispatchable(3 as never, { args: [0], backends })).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_INVALID_IMPL" }));
    expect(() => dispatchable((a: number) => a, { args: [0], backends: {} as never })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }),
    );
    // biome-ignore lint/correctness/noUnusedFunctionParameters: only the parameter list is read.
    expect(parameterNames(function f(a: number, { b }: { b: number }, ...rest: number[]) {})).toEqual(["a", "", "rest"]);
    expect(parameterNames((x: number) => x)).toEqual(["x"]);
  });

  it("drops cached decisions on every declaration, registration, disposal and option change (property)", () => {
    class A {}
    class B {}
    type Step =
      | { kind: "declare"; type: typeof A; primary: boolean }
      | { kind: "register"; backend: number }
      | { kind: "dispose" }
      | { kind: "call"; x: "A" | "B" | "n" };
    const steps = fc.array(
      fc.oneof(
        fc.record({ kind: fc.constant("declare" as const), type: fc.constantFrom(A, B), primary: fc.boolean() }),
        fc.record({ kind: fc.constant("register" as const), backend: fc.nat(2) }),
        fc.record({ kind: fc.constant("dispose" as const) }),
        fc.record({ kind: fc.constant("call" as const), x: fc.constantFrom("A" as const, "B" as const, "n" as const) }),
      ),
      { minLength: 3, maxLength: 24 },
    );
    type Set = ReturnType<typeof createBackends>;
    type Handles = Array<{ dispose(): void }>;
    // Backends are named b0, b1, … in the order they are declared; a registration names one of the first three.
    const apply = (step: Step, s: Set, handles: Handles) => {
      if (step.kind === "declare")
        s.declare({ name: `b${s.backends().length}`, ...(step.primary ? { primaryTypes: [step.type] } : { secondaryTypes: [step.type] }) });
      else if (step.kind === "register")
        handles.push(s.register(`b${step.backend}`, "f", () => `b${step.backend} ran`, { override: true }));
      else if (step.kind === "dispose") handles.pop()?.dispose();
    };
    const outcome = (f: (x: unknown) => unknown, x: unknown) => {
      try {
        return f(x);
      } catch (e) {
        return (e as { code?: string }).code;
      }
    };
    // One set lives through all the steps, its caches with it; at each call it must answer as a set
    // built afresh from the steps so far. A run is outside any scope or inside one, so both the plain
    // cache and a scope's cache see every change.
    const run = (all: Step[]) => {
      const live = createBackends({ name: "prop", discover: false });
      const liveHandles: Handles = [];
      const f = dispatchable((x: unknown) => `default ${typeof x}`, { name: "f", args: [0], backends: live });
      all.forEach((step, i) => {
        if (step.kind !== "call") {
          apply(step, live, liveHandles);
          return;
        }
        const fresh = createBackends({ name: "prop", discover: false });
        const freshHandles: Handles = [];
        const g = dispatchable((x: unknown) => `default ${typeof x}`, { name: "f", args: [0], backends: fresh });
        for (const earlier of all.slice(0, i)) apply(earlier, fresh, freshHandles);
        const x = step.x === "A" ? new A() : step.x === "B" ? new B() : 1;
        expect(outcome(f, x)).toEqual(outcome(g, x));
      });
    };
    const scopes = fc.constantFrom(undefined, { prioritize: ["b0"] }, { disable: ["b1"] }, { prioritize: ["b2"], disable: ["b0"] });
    fc.assert(
      fc.property(steps, scopes, (all, scope) =>
        scope === undefined ? run(all as Step[]) : backendOptions(scope, () => run(all as Step[])),
      ),
      { numRuns: 300 },
    );
  });
});

describe("protocols are asked for each value", () => {
  it("decides plain objects, null-prototype objects, proxies and marked instances each on its own, on every path", async () => {
    // @ts-expect-error: a plain ES module fixture, shared with the integration test.
    const { run } = (await import("../fixtures/protocol-values.mjs")) as {
      run: (api: unknown) => { calls: number; wrong: string[] };
    };
    const result = run({ backendOptions, createBackends, dispatchable });
    expect(result.calls).toBe(300);
    expect(result.wrong).toEqual([]);
  });
});

describe("values decided by protocols", () => {
  it("each value goes where the protocols' answers for it say, whatever was called before with its class, undefined included", () => {
    const backends = createBackends({ name: "answers", discover: false, env: {} });
    const marked = (key: string) => ({ [Symbol.hasInstance]: (v: unknown) => typeof v === "object" && v !== null && key in v });
    backends.declare({ name: "a", primaryTypes: [marked("a")], implementations: { f: () => "a" } });
    backends.declare({ name: "b", primaryTypes: [marked("b")], implementations: { f: () => "b" } });
    const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends });
    const bare = (key?: string) => Object.assign(Object.create(null) as object, key === undefined ? {} : { [key]: 1 });
    // undefined and a null-prototype object have the same prototype (none): the first must not decide for the second.
    expect(f(undefined)).toBe("default");
    const calls: Array<[unknown, string]> = [
      [bare("a"), "a"],
      [bare("b"), "b"],
      [bare(), "default"],
      [{ a: 1 }, "a"],
      [{ b: 1 }, "b"],
      [{}, "default"],
      [undefined, "default"],
    ];
    for (let round = 0; round < 3; round++) expect(calls.map(([v]) => f(v))).toEqual(calls.map(([, want]) => want));
    const trace: TraceEntry[] = [];
    backendOptions({ trace }, () => [f({ b: 1 }), f({ a: 1 }), f({})]);
    expect(trace.map((t) => [t.ran, t.skipped.map((s) => `${s.backend}: ${s.reason}`)])).toEqual([
      ["b", ["a: does not accept Object (argument _x)"]],
      ["a", ["b: does not accept Object (argument _x)"]],
      ["default", ["a: does not accept Object (argument _x)", "b: does not accept Object (argument _x)"]],
    ]);
  });
});

describe("exact types and subclasses in calls", () => {
  it("sends a class declared exactly to its backend and its subclasses elsewhere, on every path", () => {
    class NdArray {}
    class Masked extends NdArray {}
    const backends = createBackends({ name: "exact-calls", discover: false, env: {} });
    backends.declare({ name: "numpy", primaryTypes: [{ exactly: NdArray }], implementations: { f: () => "numpy", g: () => "numpy" } });
    backends.declare({ name: "masked", primaryTypes: [Masked], implementations: { f: () => "masked", g: () => "masked" } });
    const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends });
    const g = dispatchable((_xs: unknown[]) => "default", { name: "g", args: (xs: unknown[]) => xs, backends });
    class Other extends NdArray {}
    for (let i = 0; i < 3; i++) {
      expect([f(new NdArray()), f(new Masked()), f(new Other())]).toEqual(["numpy", "masked", "default"]);
      expect([g([new NdArray()]), g([new Masked()]), g([new Other()])]).toEqual(["numpy", "masked", "default"]);
    }
    expect(backends.docs("f")).toContain("primary: exactly NdArray");
  });

  it("an abstract type that cannot be loaded fails the call with ERR_DISPATCH_TYPE_LOAD, naming the backend and the function", () => {
    const backends = createBackends({ name: "abstract-missing", discover: false, env: {} });
    backends.declare({ name: "nd", primaryTypes: ["@./no/such/module.cjs#Arrayish"], implementations: { h: () => "nd" } });
    const h = dispatchable((_x: unknown) => "default", { name: "h", args: [0], backends });
    expect(() => h({})).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_TYPE_LOAD",
        message: expect.stringMatching(/^h\(\): Backend "nd" of abstract-missing names the abstract type/),
        details: expect.objectContaining({ function: "h", type: "@./no/such/module.cjs#Arrayish" }),
      }),
    );
  });
});

describe("explicit types", () => {
  function arrays() {
    class Jax {}
    class Cupy {}
    const backends = createBackends({ name: "explicit", discover: false, env: {} });
    backends.declare({
      name: "jax",
      primaryTypes: [Jax],
      secondaryTypes: [Number],
      implementations: { arange: (n: number) => `jax ${n}` },
    });
    backends.declare({ name: "cupy", primaryTypes: [Cupy], implementations: { arange: (n: number) => `cupy ${n}` } });
    const arange = dispatchable((n: number) => `default ${n}`, { name: "arange", args: [], backends });
    const scale = dispatchable((_x: unknown, k: number) => `default scale ${k}`, { name: "scale", args: [0], backends });
    backends.register("jax", scale, (_x: unknown, k: number) => `jax scale ${k}`);
    return { Jax, Cupy, arange, scale };
  }

  it("a call with no array argument says which types it is for, per call with like() and in a scope with types", () => {
    const { Jax, Cupy, arange } = arrays();
    expect(arange(3)).toBe("default 3");
    expect(arange.like(Jax)(3)).toBe("jax 3");
    expect(arange.like(new Cupy())(4)).toBe("cupy 4");
    expect(arange.like(Jax).name).toBe("arange");
    expect(backendOptions({ types: [Cupy] }, () => [arange(5), arange(5)])).toEqual(["cupy 5", "cupy 5"]);
    // Nested scopes add their types; the call's own like() adds to the scope's.
    expect(() => backendOptions({ types: [Cupy] }, () => backendOptions({ types: [Jax] }, () => arange(1)))).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_MIXED_INPUTS", message: expect.stringContaining("explicit type 1 is Cupy") }),
    );
    expect(() => backendOptions({ types: [Cupy] }, () => arange.like(Jax)(1))).toThrow(/explicit type 2 is Jax \(a type of jax\)/);
    expect(arange(3)).toBe("default 3");
  });

  it("selection treats explicit types as arguments, beside the real ones; a set that declares none of a scope's types ignores them", () => {
    const { Jax, Cupy, scale } = arrays();
    expect(backendOptions({ types: [Jax] }, () => scale(2, 3))).toBe("jax scale 3");
    expect(() => backendOptions({ types: [Jax] }, () => scale(new Cupy(), 3))).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_MIXED_INPUTS" }),
    );
    class Foreign {}
    const trace: TraceEntry[] = [];
    expect(backendOptions({ types: [Foreign], trace }, () => scale(2, 3))).toBe("default scale 3");
    expect(trace[0]?.types).toEqual(["Number"]);
    expect(backendOptions({ types: [Jax] }, () => scale.resolve(2, 3))).toMatchObject({ backend: "jax" });
  });

  it("refuses a type that cannot stand for an argument, with a code", () => {
    const { arange } = arrays();
    expect(() => arange.like(null)).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }));
    expect(() => backendOptions({ types: [undefined] }, () => 1)).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }));
    expect(() => backendOptions({ types: "Jax" as never }, () => 1)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }),
    );
  });
});

describe("implementations that take the call's context", () => {
  class Jax {
    constructor(readonly v: number) {}
  }
  function setup() {
    const backends = createBackends({ name: "context", discover: false, env: {} });
    const seen: unknown[] = [];
    const withContext = Object.assign(
      (context: CallContext, x: Jax, k: number) => {
        seen.push(context);
        // An xp-style result built from the matched class; a defer for k < 0.
        if (k < 0) return context.next(x, -k);
        const [Type] = context.classes as [new (v: number) => Jax];
        return new Type(x.v * k);
      },
      { usesContext: true },
    );
    backends.declare({ name: "first", primaryTypes: [Jax], secondaryTypes: [Number], implementations: { scale: withContext } });
    backends.declare({
      name: "second",
      primaryTypes: [Jax],
      secondaryTypes: [Number],
      implementations: { scale: (x: Jax, k: number) => `second ${x.v * k}` },
    });
    const scale = dispatchable((x: Jax, k: number) => `default ${x.v * k}`, { name: "scale", args: [0, 1], backends });
    return { scale, seen };
  }

  it("get the chosen backend, the matched types, the backends still to try and the options in force", () => {
    const { scale, seen } = setup();
    for (let i = 0; i < 3; i++) expect(scale(new Jax(2), 3)).toEqual(new Jax(6));
    expect(seen[0]).toMatchObject({
      function: "scale",
      backend: "first",
      types: ["Jax", "Number"],
      classes: [Jax, Number],
      remaining: ["second", "default"],
      options: { prioritize: [], disable: [], types: [] },
      prioritized: false,
    });
    backendOptions({ prioritize: ["first"], disable: ["second"] }, () => scale(new Jax(1), 1));
    expect(seen.at(-1)).toMatchObject({
      remaining: ["default"],
      options: { prioritize: ["first"], disable: ["second"] },
      prioritized: true,
    });
  });

  it("defer to the next backend with context.next(), which the trace shows", () => {
    const { scale } = setup();
    const trace: TraceEntry[] = [];
    expect(backendOptions({ trace }, () => scale(new Jax(2), -5))).toBe("second 10");
    expect(trace).toHaveLength(1);
    expect(trace[0]).toMatchObject({ ran: "second" });
    expect(trace[0]?.skipped).toContainEqual({ backend: "first", reason: "deferred to the next backend with context.next()" });
    expect(scale.resolve(new Jax(2), 3)).toMatchObject({ backend: "first" });
  });
});

describe("wrapping backends", () => {
  class Nd {
    constructor(readonly data: number[]) {}
  }
  class Jax {
    constructor(readonly data: number[]) {}
  }
  function setup() {
    const backends = createBackends({ name: "wrapping", discover: false, env: {} });
    backends.declare({
      name: "jax",
      primaryTypes: [Jax],
      secondaryTypes: [Number],
      implementations: {
        add: (x: Jax, k: number) => new Jax(x.data.map((v) => v + k)),
        total: (x: Jax) => x.data.reduce((a, b) => a + b, 0),
      },
    });
    backends.declare({
      name: "jax-on-nd",
      primaryTypes: [Nd],
      secondaryTypes: [Number],
      requiresOptIn: true,
      wraps: {
        backend: "jax",
        convert: (v) => (v instanceof Nd ? new Jax(v.data) : v),
        restore: (r) => {
          if (r instanceof Jax) return new Nd(r.data);
          if (typeof r === "number") return r;
          throw new TypeError("not a Jax array");
        },
      },
    });
    const add = dispatchable((x: Nd, k: number) => new Nd(x.data.map((v) => v + k)), { name: "add", args: [0, 1], backends });
    const total = dispatchable((x: Nd) => x.data.reduce((a, b) => a + b, 0), { name: "total", args: [0], backends });
    return { backends, add, total };
  }

  it("converts the inputs, runs the wrapped backend's implementation, converts the result back, and says so in the trace", () => {
    const { backends, add, total } = setup();
    expect(add(new Nd([1, 2]), 1)).toEqual(new Nd([2, 3]));
    const trace: TraceEntry[] = [];
    const out = backendOptions({ prioritize: ["jax-on-nd"], trace }, () => [add(new Nd([1, 2]), 1), total(new Nd([1, 2]))]);
    expect(out).toEqual([new Nd([2, 3]), 3]);
    expect(trace.map((t) => [t.ran, t.wraps])).toEqual([
      ["jax-on-nd", "jax"],
      ["jax-on-nd", "jax"],
    ]);
    expect(backends.backends().find((b) => b.name === "jax-on-nd")?.functions).toEqual({
      add: "add (wraps jax)",
      total: "total (wraps jax)",
    });
    // Its own implementation wins over the wrapped one.
    backends.register("jax-on-nd", "total", () => -1);
    expect(backendOptions({ prioritize: ["jax-on-nd"] }, () => total(new Nd([1])))).toBe(-1);
  });

  it("is covered by referenceCheck", () => {
    const { add } = setup();
    const report = referenceCheck(add, {
      inputs: [[new Nd([1]), 2]],
      prepare: (b, [x, k]) => (b === "jax" ? [new Jax((x as Nd).data), k] : [x, k]),
      normalize: (_b, r) => (r instanceof Jax ? new Nd(r.data) : r),
    });
    expect(report.backends).toEqual(["jax", "jax-on-nd"]);
    // One input, run through each of the two: listed is not enough, each must have been run.
    expect(report.checked).toBe(2);
    expect(report.disagreements).toEqual([]);
  });

  it("a convert that throws and a result restore cannot take give ERR_DISPATCH_CONVERT naming the backend and the function", () => {
    const { backends, add } = setup();
    backends.declare({
      name: "broken",
      primaryTypes: [Nd],
      secondaryTypes: [Number],
      higherPriorityThan: ["jax-on-nd"],
      wraps: {
        backend: "jax",
        convert: (v) => {
          if (v === 13) throw new RangeError("unlucky");
          return v instanceof Nd ? new Jax(v.data) : v;
        },
        restore: () => {
          throw new TypeError("cannot take it");
        },
      },
    });
    expect(() => add(new Nd([1]), 13)).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_CONVERT",
        details: expect.objectContaining({ backend: "broken", function: "add", phase: "convert", argument: 1 }),
      }),
    );
    expect(() => add(new Nd([1]), 1)).toThrow(
      /Backend "broken" wraps "jax", but restore could not convert back what jax's add\(\) returned \(Jax instance\): cannot take it/,
    );
  });

  it("refuses a malformed wraps, and one that closes a cycle, keeping the backends it had", () => {
    const { backends } = setup();
    const wraps = (w: unknown) => () => backends.declare({ name: "w", wraps: w as never });
    expect(wraps({ backend: "jax", convert: (v: unknown) => v })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_BACKEND_DECLARATION" }),
    );
    expect(wraps({ backend: "jax", convert: 1, restore: (r: unknown) => r })).toThrow(/convert must be a function/);
    expect(wraps({ backend: "w", convert: (v: unknown) => v, restore: (r: unknown) => r })).toThrow(/names the backend itself/);
    expect(wraps({ backend: "jax", convert: (v: unknown) => v, restore: (r: unknown) => r, extra: 1 })).toThrow(/unknown keys "extra"/);
    backends.declare({ name: "a", wraps: { backend: "b", convert: (v) => v, restore: (r) => r } });
    expect(() => backends.declare({ name: "b", wraps: { backend: "a", convert: (v) => v, restore: (r) => r } })).toThrow(/closes a cycle/);
    expect(backends.backends().map((b) => b.name)).toEqual(["jax", "jax-on-nd", "a"]);
  });
});
