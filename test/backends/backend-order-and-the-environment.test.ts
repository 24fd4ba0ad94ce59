import { describe, expect, it } from "vitest";
import { prioritize, readEnvControl, sortBackends } from "../../src/dispatchable/backend-order.js";

const b = (name: string, higher: string[] = [], lower: string[] = []) => ({ name, higherPriorityThan: higher, lowerPriorityThan: lower });

describe("sortBackends", () => {
  it("keeps declaration order where nothing constrains it, and follows every constraint", () => {
    expect(sortBackends([b("a"), b("b"), b("c")])).toEqual(["a", "b", "c"]);
    expect(sortBackends([b("a"), b("b"), b("c", ["a"])])).toEqual(["c", "a", "b"]);
    expect(sortBackends([b("a", [], ["b"]), b("b"), b("c")])).toEqual(["b", "a", "c"]);
    expect(sortBackends([b("a"), b("b"), b("c")], [["c", "b"]])).toEqual(["a", "c", "b"]);
    // A constraint naming a backend that is not declared is ignored.
    expect(sortBackends([b("a", ["ghost"])])).toEqual(["a"]);
  });

  it("reports a cycle with the constraints that form it, and a fix", () => {
    let error: unknown;
    try {
      sortBackends([b("a", ["b"]), b("b", ["c"]), b("c", ["a"]), b("d")]);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "ERR_DISPATCH_PRIORITY_CYCLE" });
    const message = (error as Error).message;
    expect(message).toContain("a higherPriorityThan b");
    expect(message).toContain("c higherPriorityThan a");
    expect(message).toContain("To fix");
    expect(message).not.toContain("d ");
  });

  it("the environment's order overrides a declared constraint it contradicts, but two of its own pairs that contradict each other are a cycle, in either order", () => {
    expect(sortBackends([b("a", ["b"]), b("b")], [["b", "a"]])).toEqual(["b", "a"]);
    for (const pairs of [
      [
        ["a", "b"],
        ["b", "a"],
      ],
      [
        ["b", "a"],
        ["a", "b"],
      ],
    ] as const) {
      expect(() => sortBackends([b("a"), b("b")], pairs), JSON.stringify(pairs)).toThrow(
        expect.objectContaining({ code: "ERR_DISPATCH_PRIORITY_CYCLE", message: expect.stringContaining("a>b from the environment") }),
      );
    }
  });

  it("a cycle names the set, the function and the variable it comes from, and fixes the variable where only its pairs form it (it named none, and said <PREFIX>_SET_ORDER)", () => {
    const site = { set: "ml-ops", fn: "pool", variable: "ML_OPS_SET_ORDER" };
    const fromTheVariable = [
      ["a", "b"],
      ["b", "a"],
    ] as const;
    expect(() => sortBackends([b("a"), b("b")], fromTheVariable, site.variable, site)).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_PRIORITY_CYCLE",
        message: expect.stringMatching(
          /^pool\(\): the priorities of backends a, b of ml-ops form a cycle: .* To fix: correct ML_OPS_SET_ORDER: drop one of a>b, b>a\.$/,
        ),
        details: expect.objectContaining({ set: "ml-ops", function: "pool", variable: "ML_OPS_SET_ORDER" }),
      }),
    );
    // Declared constraints alone: the variable is the way out, and no detail names it.
    let declared: unknown;
    try {
      sortBackends([b("a", ["b"]), b("b", ["a"])], [], site.variable, site);
    } catch (error) {
      declared = error;
    }
    expect((declared as Error).message).toContain("or order the backends explicitly with ML_OPS_SET_ORDER");
    expect((declared as Error).message).not.toContain("<PREFIX>");
    expect((declared as { details: object }).details).not.toHaveProperty("variable");
    // A declared constraint the variable repeats cannot break the cycle: the variable must change.
    // Only the cycle's own links are named (c higherPriorityThan d is no part of it).
    const threeWay = [
      ["a", "b"],
      ["b", "c"],
      ["c", "a"],
    ] as const;
    let repeated: unknown;
    try {
      sortBackends([b("a"), b("b", ["c"]), b("c", ["d"]), b("d")], threeWay, site.variable, site);
    } catch (error) {
      repeated = error;
    }
    expect((repeated as Error).message).toContain("To fix: correct ML_OPS_SET_ORDER: drop one of");
    expect((repeated as Error).message).not.toContain("c higherPriorityThan d");
  });

  it("prioritize() moves names to the front in their own order", () => {
    expect(prioritize(["a", "b", "c", "d"], ["c", "a", "ghost"])).toEqual(["c", "a", "b", "d"]);
  });
});

describe("readEnvControl", () => {
  const known = new Set(["numpy", "jax", "cupy"]);
  it("reads the three variables under the prefix", () => {
    const control = readEnvControl(
      "NUM",
      { NUM_PRIORITIZE: "cupy, jax", NUM_BLOCK: "numpy", NUM_SET_ORDER: "jax>cupy" },
      known,
      "add",
      "num",
    );
    expect(control).toEqual({ prioritize: ["cupy", "jax"], block: ["numpy"], order: [["jax", "cupy"]] });
  });

  it("refuses an invalid value with a code naming the variable, the backend and the function", () => {
    const read = (env: Record<string, string>) => () => readEnvControl("NUM", env, known, "add", "num");
    expect(read({ NUM_PRIORITIZE: "tpu" })).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_UNKNOWN_BACKEND",
        message: expect.stringContaining('add(): NUM_PRIORITIZE="tpu" names the backend "tpu", which num does not declare'),
        details: { backend: "tpu", function: "add", variable: "NUM_PRIORITIZE", set: "num" },
      }),
    );
    expect(read({ NUM_BLOCK: "jax, cupyy" })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('(did you mean "cupy"?)') }),
    );
    expect(read({ NUM_SET_ORDER: "jax>tpu" })).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_UNKNOWN_BACKEND" }));
    for (const pair of ["jax>>cupy", "jax>jax", "jax"])
      expect(read({ NUM_SET_ORDER: pair }), pair).toThrow(
        expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION", message: expect.stringContaining("higher>lower") }),
      );
    // The hint is a pair of the set's own backends, or a placeholder pair when it has only one.
    const lone = () => readEnvControl("ONE", { ONE_SET_ORDER: "typed" }, new Set(["typed"]), "add", "one");
    expect(lone).toThrow(expect.objectContaining({ message: expect.stringContaining('write pairs such as "a>b"') }));
  });
});
