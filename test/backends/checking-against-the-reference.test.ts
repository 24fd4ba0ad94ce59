import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { referenceCheck } from "../../src/dispatchable/reference-check.js";

class Fast {}

describe("referenceCheck", () => {
  it("runs every backend's implementation against the reference and reports each disagreement with both results", () => {
    const backends = createBackends({ name: "refcheck", discover: false });
    backends.declare({ name: "good", primaryTypes: [Fast], implementations: { square: (x: number) => x * x } });
    backends.declare({ name: "off-by-one", primaryTypes: [Fast], implementations: { square: (x: number) => x * x + (x > 2 ? 1 : 0) } });
    backends.declare({
      name: "throws",
      primaryTypes: [Fast],
      implementations: {
        square: () => {
          throw new Error("not ready");
        },
      },
    });
    const square = dispatchable((x: number) => x * x, { name: "square", args: [0], backends });
    const report = referenceCheck(square, { inputs: [[1], [2], [3]] });
    expect(report.backends).toEqual(["good", "off-by-one", "throws"]);
    expect(report.checked).toBe(9);
    expect(report.disagreements.map((d) => [d.backend, d.inputs, d.expected, d.actual])).toEqual([
      ["off-by-one", [3], 9, 10],
      ["throws", [1], 1, undefined],
      ["throws", [2], 4, undefined],
      ["throws", [3], 9, undefined],
    ]);
    expect(report.disagreements[1]?.error).toMatchObject({ message: "not ready" });
  });

  it("prepares inputs per backend and compares with the caller's equality", () => {
    const backends = createBackends({ name: "refcheck-2", discover: false });
    // It takes only strings, and its results are off by a rounding error.
    const strings = (s: string) => {
      if (typeof s !== "string") throw new TypeError(`wants a string, got ${typeof s}`);
      return `${Number(s) * 2 + 1e-12}`;
    };
    backends.declare({ name: "strings", primaryTypes: [String], implementations: { double: strings } });
    const double = dispatchable((x: number) => x * 2, { name: "double", args: [0], backends });
    const options = {
      inputs: [[1.5], [4]],
      prepare: (_backend: string, [x]: readonly unknown[]) => [String(x)],
      normalize: (_b: string, r: unknown) => Number(r),
      equal: (a: unknown, e: unknown) => Math.abs((a as number) - (e as number)) < 1e-9,
    };
    expect(referenceCheck(double, options)).toMatchObject({ checked: 2, disagreements: [] });
    // Each of the two is needed: unprepared, the backend gets numbers; by default, equality is exact.
    const { prepare: _prepare, ...unprepared } = options;
    expect(referenceCheck(double, unprepared).disagreements.map((d) => (d.error as Error).message)).toEqual([
      "wants a string, got number",
      "wants a string, got number",
    ]);
    const { equal: _equal, ...exact } = options;
    expect(referenceCheck(double, exact).disagreements.map((d) => [d.expected, d.actual])).toEqual([
      [3, 3 + 1e-12],
      [8, 8 + 1e-12],
    ]);
  });

  it("runs what an implementation's shouldRun() declines as a call would, on the next backend (the reference), directly and through a backend that wraps it", () => {
    const backends = createBackends({ name: "refcheck-declines", discover: false });
    class Other {}
    // Declines negative inputs (a call sends them on to the next backend); wrong on them, were it asked.
    const sum = Object.assign((x: number) => (x < 0 ? -1 : x), { shouldRun: (_c: unknown, x: number) => x >= 0 });
    backends.declare({ name: "picky", primaryTypes: [Fast], implementations: { ident: sum } });
    backends.declare({ name: "on-other", primaryTypes: [Other], wraps: { backend: "picky", convert: (v) => v, restore: (r) => r } });
    const ident = dispatchable((x: number) => x, { name: "ident", args: [0], backends });
    const report = referenceCheck(ident, { inputs: [[2], [-2]] });
    expect(report.backends).toEqual(["picky", "on-other"]);
    expect(report.disagreements).toEqual([]);
    expect(report.checked).toBe(4);
  });

  it("refuses what it cannot run with a code, before running anything: not a dispatchable, no inputs, an input that is not an argument list, a misspelt or mistyped option", () => {
    const backends = createBackends({ name: "refcheck-input", discover: false });
    let ran = 0;
    const counted = (x: number) => {
      ran++;
      return x * x;
    };
    backends.declare({ name: "good", primaryTypes: [Fast], implementations: { square: counted } });
    const square = dispatchable(counted, { name: "square", args: [0], backends });
    const refused = (fn: unknown, options: unknown) => {
      try {
        referenceCheck(fn as typeof square, options as never);
      } catch (error) {
        return [(error as { code?: string }).code, (error as Error).message];
      }
      return "accepted";
    };
    expect(refused(square, undefined)).toEqual([
      "ERR_DISPATCH_INVALID_OPTION",
      "referenceCheck(square): options must be an object, got undefined.",
    ]);
    expect(refused(square, { inputs: 5 })).toEqual([
      "ERR_DISPATCH_INVALID_OPTION",
      'referenceCheck(square): "inputs" must be an array, got number 5.',
    ]);
    expect(refused(square, { inputs: [[1], 2] })).toEqual([
      "ERR_DISPATCH_INVALID_OPTION",
      'referenceCheck(square): "inputs" must list argument lists, got number 2 at position 1. Write inputs: [[x], [x, 2]].',
    ]);
    expect(refused(square, { inptus: [[1]] })).toEqual([
      "ERR_DISPATCH_INVALID_OPTION",
      expect.stringContaining('referenceCheck(square): unknown option "inptus" (did you mean "inputs"?)'),
    ]);
    expect(refused(square, { inputs: [[1]], equal: 5 })).toEqual([
      "ERR_DISPATCH_INVALID_OPTION",
      'referenceCheck(square): "equal" must be a function, got number 5.',
    ]);
    expect(refused(() => 1, { inputs: [] })).toEqual([
      "ERR_DISPATCH_INVALID_OPTION",
      "referenceCheck(): the first argument must be a function made with dispatchable(), got anonymous function.",
    ]);
    expect(ran).toBe(0);
    expect(referenceCheck(square, { inputs: [[2]] }).disagreements).toEqual([]);
    // prepare() gives each backend's argument list: anything else is refused, not spread or replaced.
    for (const wrong of [5, "ab", undefined]) {
      expect(refused(square, { inputs: [[2]], prepare: () => wrong })).toEqual([
        "ERR_DISPATCH_INVALID_OPTION",
        expect.stringContaining('referenceCheck(square): prepare() must return the argument list for backend "good", got'),
      ]);
    }
  });
});
