import { describe, expect, it } from "vitest";
import { Registration } from "../../src/registry/registration.js";
import { admit, type Request } from "../../src/registry/registry-input.js";

class Pool {}
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
