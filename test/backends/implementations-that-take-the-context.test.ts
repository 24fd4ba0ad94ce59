import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import type { CallContext } from "../../src/dispatchable/impl-table.js";
import { backendOptions, type TraceEntry } from "../../src/dispatchable/options-scope.js";
import { referenceCheck } from "../../src/dispatchable/reference-check.js";

class Fast {}

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

describe("referenceCheck and the call's context", () => {
  it("gives an implementation that takes the context one, whose next() runs the reference; what it makes of next() is compared", () => {
    const backends = createBackends({ name: "refcheck-context", discover: false });
    const impl = Object.assign(
      (context: { backend: string; next(...a: unknown[]): unknown }, x: number) => (x < 0 ? context.next() : x * 2),
      {
        usesContext: true,
      },
    );
    backends.declare({ name: "ctx", primaryTypes: [Fast], implementations: { twice: impl } });
    const twice = dispatchable((x: number) => x * 2, { name: "twice", args: [0], backends });
    expect(referenceCheck(twice, { inputs: [[1], [-3]] })).toMatchObject({ checked: 2, disagreements: [] });
    // What it makes of the next backend's result is its own, and compared.
    const off = Object.assign(
      (context: { next(...a: unknown[]): unknown }, x: number) => (x < 0 ? (context.next() as number) + 1 : x * 2),
      {
        usesContext: true,
      },
    );
    backends.declare({ name: "off", primaryTypes: [], implementations: { twice: off } });
    expect(referenceCheck(twice, { inputs: [[-3]] }).disagreements.map((d) => [d.backend, d.expected, d.actual])).toEqual([
      ["off", -6, -5],
    ]);
  });
});

describe("referenceCheck and next() with other arguments", () => {
  it("compares what an implementation returns after calling next() with arguments of its own", () => {
    const backends = createBackends({ name: "refcheck-next-args", discover: false });
    const swapped = Object.assign((context: { next(...a: unknown[]): unknown }, a: number, b: number) => context.next(b, a), {
      usesContext: true,
    });
    backends.declare({ name: "swaps", primaryTypes: [Fast], implementations: { sub: swapped } });
    const sub = dispatchable((a: number, b: number) => a - b, { name: "sub", args: [0], backends });
    expect(referenceCheck(sub, { inputs: [[5, 3]] }).disagreements.map((d) => [d.backend, d.expected, d.actual])).toEqual([
      ["swaps", 2, -2],
    ]);
  });
});
