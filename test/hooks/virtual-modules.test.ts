import { describe, expect, it } from "vitest";
import { parseVirtual, virtualUrl } from "../../src/hooks/virtual-modules.js";

describe("virtual module URLs", () => {
  it("are siblings of the original that keep its query and hash, and parse back", () => {
    const original = "file:///app/node_modules/tensorlab/link/numba/basic.js?copy=2#x";
    const facade = virtualUrl(original, "facade");
    expect(facade).toBe("file:///app/node_modules/tensorlab/link/numba/basic.js.dispatch-hook-facade.mjs?copy=2#x");
    expect(parseVirtual(facade)).toEqual({ original, kind: "facade", index: 0, commonjs: false });
    expect(parseVirtual(virtualUrl(original, "step", 12, true))).toEqual({ original, kind: "step", index: 12, commonjs: true });
    expect(virtualUrl("file:///a/cpu.js", "cjs-facade")).toBe("file:///a/cpu.js.dispatch-hook-cjs-facade.cjs");
  });

  it("are not confused with ordinary files", () => {
    expect(parseVirtual("file:///a/basic.js")).toBeUndefined();
    expect(parseVirtual("file:///a/notes.dispatch-hook-readme.mjs")).toBeUndefined();
    expect(parseVirtual("file:///a/x.dispatch-hook-facade.mjs.bak")).toBeUndefined();
  });
});
