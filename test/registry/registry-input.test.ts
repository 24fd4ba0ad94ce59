import { describe, expect, it } from "vitest";
import { keyName } from "../../src/channel.js";
import { checkExpectInput, checkRegisterInput } from "../../src/registry/registry-input.js";

class Pool {}

describe("registry input checks", () => {
  it("refuse what register() cannot take, each with its code", () => {
    expect(() => checkRegisterInput("my backend", Pool, () => 1, undefined)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_BACKEND" }),
    );
    expect(() => checkRegisterInput("numba", "Pool" as never, () => 1, undefined)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OP_TYPE" }),
    );
    expect(() => checkRegisterInput("numba", Pool, 1 as never, undefined)).toThrow(
      /register\("numba", Pool, …\): the implementation must be a function, got number 1/,
    );
    expect(() => checkRegisterInput("numba", Pool, () => 1, { overide: true } as never)).toThrow(/did you mean "override"/);
    expect(() => checkRegisterInput("numba", Pool, () => 1, { override: true })).not.toThrow();
  });

  it("refuse what expect() cannot take", () => {
    expect(() => checkExpectInput("numba", ["Pool", ""], undefined)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }),
    );
    expect(() => checkExpectInput("numba", ["Pool"], 3 as never)).toThrow(/"source" must be a string/);
  });

  it("names anonymous classes", () => {
    expect(keyName(Pool)).toBe("Pool");
    expect(keyName((() => class {})())).toBe("(anonymous class)");
  });
});
