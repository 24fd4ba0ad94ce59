import { describe, expect, it } from "vitest";
import { DispatchHookError, describe as describeValue, errorCodes } from "../../src/registry/errors.js";

describe("DispatchHookError", () => {
  it("carries a stable code, details and cause", () => {
    const cause = new Error("root");
    const error = new DispatchHookError("ERR_DISPATCH_SEALED", "sealed", { cause, details: { backend: "numba" } });
    expect(error.code).toBe("ERR_DISPATCH_SEALED");
    expect(error.name).toBe("DispatchHookError [ERR_DISPATCH_SEALED]");
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ backend: "numba" });
    expect(new DispatchHookError("ERR_DISPATCH_CONFLICT", "x").details).toEqual({});
    expect(String(error)).toBe("DispatchHookError [ERR_DISPATCH_SEALED]: sealed");
  });

  it("has one table of codes, each named ERR_DISPATCH_*", () => {
    for (const code of Object.keys(errorCodes)) expect(code).toMatch(/^ERR_DISPATCH_[A-Z_]+$/);
    expect(Object.keys(errorCodes)).toContain("ERR_DISPATCH_NO_IMPL");
  });
});

describe("describe", () => {
  it("describes values briefly and safely", () => {
    expect(describeValue(function named() {})).toBe("function named");
    expect(describeValue(() => {})).toBe("anonymous function");
    expect(describeValue("s")).toBe('"s"');
    expect(describeValue(null)).toBe("null");
    expect(describeValue(Object.create(null))).toBe("object with null prototype");
    expect(describeValue(new Map())).toBe("Map instance");
    expect(describeValue(Object.create(Object.create(null, { constructor: { value: 5 } })))).toBe("object");
    expect(describeValue(3)).toBe("number 3");
    expect(describeValue(undefined)).toBe("undefined undefined");
  });
});
