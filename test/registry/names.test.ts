import { describe, expect, it } from "vitest";
import { backendNameProblem, checkBackend } from "../../src/registry/options.js";
import { thrown } from "../helpers.js";

describe("backend names", () => {
  it("are plain non-empty strings", () => {
    expect(backendNameProblem("numba")).toBeUndefined();
    expect(backendNameProblem("jax-0.4_gpu")).toBeUndefined();
    expect(backendNameProblem("")?.code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(backendNameProblem(3)?.code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(backendNameProblem("my backend")?.reason).toContain("whitespace or a path separator");
    expect(backendNameProblem("a/b")?.code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(backendNameProblem("__proto__")?.code).toBe("ERR_DISPATCH_RESERVED_NAME");
  });

  it("are checked where they enter, with the call named", () => {
    expect(thrown(() => checkBackend("my backend", "register()")).message).toMatch(/^register\(\): "my backend" cannot be a backend name/);
    expect(() => checkBackend("numba", "register()")).not.toThrow();
  });
});
