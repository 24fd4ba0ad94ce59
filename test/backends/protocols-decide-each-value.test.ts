import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { backendOptions, type TraceEntry } from "../../src/dispatchable/options-scope.js";

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

describe("a protocol whose answer changes from one ask to the next", () => {
  it("never makes a call contradict itself, and leaves no decision behind for the values that come after", () => {
    const backends = createBackends({ name: "flaky", discover: false, env: {} });
    backends.declare({
      name: "duck",
      primaryTypes: [
        { [Symbol.hasInstance]: (v: unknown) => typeof v === "object" && v !== null && (v as { duck?: unknown }).duck === true },
      ],
      implementations: { f: () => "duck" },
    });
    const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends });
    let asked = 0;
    // Answers yes, no, yes, … : each call's plan sees one answer per ask, and may keep none of them.
    const flaky = {
      get duck() {
        asked++;
        return asked % 2 === 1;
      },
    };
    for (let i = 0; i < 4; i++) expect(["duck", "default"]).toContain(f(flaky));
    // Asked once for the cache key and once for the plan; never the four times a plan asked before.
    expect(asked).toBeLessThanOrEqual(10);
    // Values of the same class that answer steadily go where their own answers say.
    for (let i = 0; i < 3; i++) {
      expect(f({ duck: true })).toBe("duck");
      expect(f({ duck: false })).toBe("default");
    }
  });
});
