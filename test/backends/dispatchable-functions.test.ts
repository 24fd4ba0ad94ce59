import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable, parameterNames } from "../../src/dispatchable/dispatchable.js";
import { backendOptions, type TraceEntry } from "../../src/dispatchable/options-scope.js";

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
    expect(trace[2]?.skipped).toContainEqual({
      backend: "jax",
      reason: "none of the arguments is one of its primary types (Array, Number: secondary)",
    });
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
