import { describe, expect, it, vi } from "vitest";
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

  it("prioritize() moves names to the front in their own order", () => {
    expect(prioritize(["a", "b", "c", "d"], ["c", "a", "ghost"])).toEqual(["c", "a", "b", "d"]);
  });
});

describe("readEnvControl", () => {
  const known = new Set(["numpy", "jax", "cupy"]);
  it("reads the three variables under the prefix", () => {
    const control = readEnvControl("NUM", { NUM_PRIORITIZE: "cupy, jax", NUM_BLOCK: "numpy", NUM_SET_ORDER: "jax>cupy" }, known);
    expect(control).toEqual({ prioritize: ["cupy", "jax"], block: ["numpy"], order: [["jax", "cupy"]] });
  });

  it("warns with a code and ignores an invalid value, once", () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const warned = new Set<string>();
    const env = { NUM_PRIORITIZE: "tpu", NUM_SET_ORDER: "jax>>cupy", NUM_BLOCK: "jax" };
    const first = readEnvControl("NUM", env, known, warned);
    readEnvControl("NUM", env, known, warned);
    expect(first).toEqual({ prioritize: [], block: ["jax"], order: [] });
    expect(warn).toHaveBeenCalledTimes(2);
    const texts = warn.mock.calls.map((c) => String(c[0]));
    expect(texts.some((t) => t.includes('NUM_PRIORITIZE="tpu" is ignored: "tpu" is not a backend'))).toBe(true);
    expect(texts.some((t) => t.includes('NUM_SET_ORDER="jax>>cupy" is ignored'))).toBe(true);
    expect(warn.mock.calls.every((c) => (c[1] as { code?: string }).code === "DISPATCH_HOOK_BACKEND_ENV")).toBe(true);
    warn.mockRestore();
  });
});
