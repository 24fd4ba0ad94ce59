import { describe, expect, it } from "vitest";
import { keyName } from "../../src/channel.js";
import { Registration } from "../../src/registry/registration.js";
import { admit, checkExpectInput, checkRegisterInput, type Request } from "../../src/registry/registry-input.js";

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

const impl = () => 1;
const request = (over: Partial<Request> = {}): Request => ({
  backend: "numba",
  opType: Pool,
  impl,
  override: false,
  origin: undefined,
  site: undefined,
  ...over,
});
const owner = (options: { impl?: () => unknown; override?: boolean; plugin?: string } = {}) => {
  const r = new Registration(7, "numba", Pool, "Pool", options.impl ?? (() => 2), options.override ?? false, () => {});
  if (options.plugin !== undefined) r.origin = { plugin: options.plugin, module: "file:///p.js" };
  return r;
};

describe("admit", () => {
  it("takes an op type nobody holds, and one held when it overrides", () => {
    expect(admit(request(), false, undefined)).toEqual({ action: "take" });
    expect(admit(request({ override: true }), false, owner())).toEqual({ action: "take" });
  });

  it("refuses on a sealed backend, and a conflict without override, naming the holder", () => {
    expect(admit(request(), true, undefined)).toMatchObject({ action: "refuse", code: "ERR_DISPATCH_SEALED" });
    const conflict = admit(request(), false, owner({ plugin: "ml-ops" }));
    expect(conflict).toMatchObject({ action: "refuse", code: "ERR_DISPATCH_CONFLICT" });
    expect(conflict.action === "refuse" && conflict.message).toContain("registration #7, ml-ops's");
  });

  it("puts the same implementation, and a plugin's registration against an app's explicit override, behind the holder", () => {
    const holder = owner({ impl });
    expect(admit(request(), false, holder)).toEqual({ action: "wait", owner: holder, note: "the same implementation" });
    const app = owner({ override: true });
    const plugin = request({ origin: { plugin: "ml-ops", module: "file:///p.js" } });
    expect(admit(plugin, false, app)).toEqual({ action: "wait", owner: app, note: "the app's explicit override wins" });
  });
});
