import { describe, expect, it, vi } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { backendOptions, type TraceEntry } from "../../src/dispatchable/options-scope.js";
import { referenceCheck } from "../../src/dispatchable/reference-check.js";
import type { CallContext } from "../../src/index.js";
import { thrown } from "../helpers.js";
import { makeTree } from "../integration/fixture.js";

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

  it("the wrapped implementation's context is its own: its backend, the converted values' classes; what its next() returns is not restored", () => {
    const backends = createBackends({ name: "wrapping-context", discover: false, env: {} });
    const seen: unknown[] = [];
    const double = Object.assign(
      (context: CallContext, x: Jax) => {
        seen.push([context.backend, context.types, context.classes.map((c) => c.name)]);
        if (x.data.length > 1) return context.next();
        return new (context.classes[0] as typeof Jax)(x.data.map((v) => v * 2));
      },
      { usesContext: true as const },
    );
    const zeros = Object.assign((context: CallContext, n: number) => new (context.classes[0] as typeof Jax)(Array(n).fill(0)), {
      usesContext: true as const,
    });
    backends.declare({ name: "jax", primaryTypes: [Jax], implementations: { double, zeros } });
    const restored: unknown[] = [];
    backends.declare({
      name: "on-nd",
      primaryTypes: [Nd],
      wraps: {
        backend: "jax",
        convert: (v) => (v instanceof Nd ? new Jax(v.data) : v),
        restore: (r) => {
          restored.push(r);
          if (!(r instanceof Jax)) throw new TypeError("not a Jax array");
          return new Nd(r.data);
        },
      },
    });
    const reference: unknown[] = [];
    const dbl = dispatchable(
      (x: Nd | Jax) => {
        reference.push(x);
        return x.data.map((v) => v * 2);
      },
      { name: "double", args: [0], backends },
    );
    const zero = dispatchable((n: number) => Array(n).fill(0), { name: "zeros", args: [], backends });
    // Built from the context's classes: a Jax, restored to an Nd.
    expect(dbl(new Nd([3]))).toEqual(new Nd([6]));
    expect(seen).toEqual([["jax", ["Jax"], ["Jax"]]]);
    // Deferred: the default runs on the caller's own Nd, and its answer comes back as it is.
    const input = new Nd([1, 2]);
    expect(dbl(input)).toEqual([2, 4]);
    expect(reference).toEqual([input]);
    expect(restored).toEqual([new Jax([6])]);
    // An explicit type is converted too: the implementation builds the wrapped backend's type.
    expect(zero.like(Nd)(2)).toEqual(new Nd([0, 0]));
  });

  it("through a chain of wrappers, what the innermost implementation defers with a bare context.next() runs on the caller's own arguments", () => {
    class Mid {
      constructor(readonly data: number[]) {}
    }
    class Top {
      constructor(readonly data: number[]) {}
    }
    const backends = createBackends({ name: "wrapping-chain", discover: false, env: {} });
    const defer = Object.assign((context: CallContext, _x: Jax) => context.next(), { usesContext: true as const });
    backends.declare({ name: "jax", primaryTypes: [Jax], implementations: { double: defer } });
    const to =
      <T>(Kind: new (data: number[]) => T) =>
      (v: unknown) =>
        new Kind((v as { data: number[] }).data);
    backends.declare({ name: "mid", primaryTypes: [Mid], wraps: { backend: "jax", convert: to(Jax), restore: to(Mid) } });
    backends.declare({ name: "top", primaryTypes: [Top], wraps: { backend: "mid", convert: to(Mid), restore: to(Top) } });
    const seen: string[] = [];
    const dbl = dispatchable(
      (x: Top | Mid | Jax) => {
        seen.push(x.constructor.name);
        return x.data.map((v) => v * 2);
      },
      { name: "double", args: [0], backends },
    );
    expect(dbl(new Top([1, 2]))).toEqual([2, 4]);
    expect(seen).toEqual(["Top"]);
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

  it("wrapping a backend the set does not declare is a warning at the first decision, naming the nearest, and a problem of the audit while a typo stands; only the wrapper's calls go elsewhere", () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      const backends = createBackends({ name: "wrapping-typo", discover: false, env: {} });
      backends.declare({ name: "jax", primaryTypes: [Jax], implementations: { total: (x: Jax) => x.data.length } });
      backends.declare({ name: "on-nd", primaryTypes: [Nd], wraps: { backend: "jaxx", convert: (v) => v, restore: (r) => r } });
      // Far from every declared name: a backend whose package may not be installed, left alone by the audit.
      backends.declare({ name: "on-gpu", primaryTypes: [], wraps: { backend: "tensorflow", convert: (v) => v, restore: (r) => r } });
      const problems = () => backends.registry.verify().problems.map((p) => [p.kind, p.backend, p.code]);
      const total = dispatchable((_x: Nd | Jax) => -1, { name: "total", args: [0], backends });
      expect(total(new Nd([1]))).toBe(-1);
      expect(problems()).toEqual([["declaration", "on-nd", "ERR_DISPATCH_BACKEND_DECLARATION"]]);
      expect(total(new Jax([1, 2]))).toBe(2);
      expect(total(new Nd([1]))).toBe(-1);
      const said = warn.mock.calls.map((c) => c[0]).filter((w) => (w as { code?: string }).code === "ERR_DISPATCH_BACKEND_DECLARATION");
      expect(said).toHaveLength(2);
      expect(said[0]).toMatchObject({
        message: expect.stringContaining('wraps "jaxx", which the set does not declare (did you mean "jax"?)'),
        details: { set: "wrapping-typo", backend: "on-nd", wraps: "jaxx", near: "jax" },
      });
      // The trace says why the wrapper was passed over.
      const trace: TraceEntry[] = [];
      backendOptions({ trace }, () => total(new Nd([1])));
      expect(trace[0]?.skipped).toContainEqual({
        backend: "on-nd",
        reason: 'wraps "jaxx", which the set does not declare, and has no implementation of total of its own',
      });
      backends.declare({ name: "jaxx", primaryTypes: [], implementations: { total: () => 7 } });
      expect(total(new Nd([1]))).toBe(7);
      expect(problems()).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it("a lazy convert or restore that cannot load is ERR_DISPATCH_IMPL_LOAD naming the called function, before the wrapped implementation runs", () => {
    const dir = makeTree({ "impl.cjs": "exports.restore = (r) => r;\n" });
    const base = `file://${dir}/`;
    let ran = 0;
    const backends = createBackends({ name: "lazy-wrapping", discover: false, env: {} });
    backends.declare({ name: "inner", primaryTypes: [Jax], implementations: { add: () => ++ran } });
    backends.declare({
      name: "gone",
      primaryTypes: [Nd],
      base,
      wraps: { backend: "inner", convert: "./nope.cjs#convert", restore: "./impl.cjs#restore" },
    });
    backends.declare({
      name: "typo",
      primaryTypes: [Number],
      base,
      wraps: { backend: "inner", convert: (v) => v, restore: "./impl.cjs#restor" },
    });
    const add = dispatchable((x: unknown) => "default", { name: "add", args: ["x"], backends });
    // Before: the convert's error named "wraps.convert"; the restore's was ERR_DISPATCH_CONVERT, after the implementation ran.
    for (const [value, phase, backend] of [
      [new Nd([1]), "convert", "gone"],
      [1, "restore", "typo"],
    ] as const) {
      const error = thrown(() => add(value));
      expect(error).toMatchObject({ code: "ERR_DISPATCH_IMPL_LOAD", details: { backend, wraps: "inner", function: "add", phase } });
      expect((error as Error).message).toContain(`its ${phase} for add() could not be loaded`);
    }
    expect(ran).toBe(0);
  });
});
