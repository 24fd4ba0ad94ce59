import { describe, expect, it } from "vitest";
import { originalUrl, parseOriginal, parseVirtual, virtualUrl } from "../../src/hooks/virtual-modules.js";

describe("virtual module URLs", () => {
  it("are siblings of the original that keep its query and hash, and parse back", () => {
    const original = "file:///app/node_modules/tensorlab/link/numba/basic.js?copy=2#x";
    const step = virtualUrl(original, "step");
    expect(step).toBe("file:///app/node_modules/tensorlab/link/numba/basic.js.dispatch-hook-step.mjs?copy=2#x");
    expect(parseVirtual(step)).toEqual({ original, kind: "step", index: 0, commonjs: false });
    expect(parseVirtual(virtualUrl(original, "step", 12, true))).toEqual({ original, kind: "step", index: 12, commonjs: true });
    expect(virtualUrl("file:///a/cpu.js", "require", undefined, true)).toBe("file:///a/cpu.js.dispatch-hook-require-cjs.mjs");
  });

  it("are not confused with ordinary files", () => {
    expect(parseVirtual("file:///a/basic.js")).toBeUndefined();
    expect(parseVirtual("file:///a/notes.dispatch-hook-readme.mjs")).toBeUndefined();
    expect(parseVirtual("file:///a/x.dispatch-hook-step0.mjs.bak")).toBeUndefined();
  });
});

describe("an original's URL", () => {
  it("is the module's own URL with one more query parameter, before any hash, and parses back", () => {
    for (const [module, original] of [
      ["file:///a/basic.js", "file:///a/basic.js?dispatch-hook-original"],
      ["file:///a/basic.js?copy=2", "file:///a/basic.js?copy=2&dispatch-hook-original"],
      ["file:///a/basic.js#x", "file:///a/basic.js?dispatch-hook-original#x"],
      ["file:///a/basic.js?copy=2#x?y", "file:///a/basic.js?copy=2&dispatch-hook-original#x?y"],
    ] as const) {
      expect(originalUrl(module)).toBe(original);
      expect(parseOriginal(original)).toBe(module);
    }
  });

  it("is found wherever it is in the query, as another hook may add a parameter after ours", () => {
    expect(parseOriginal("file:///a/basic.js?dispatch-hook-original&iitm=true")).toBe("file:///a/basic.js?iitm=true");
    expect(parseOriginal("file:///a/basic.js?copy=2&dispatch-hook-original&iitm=true#x")).toBe("file:///a/basic.js?copy=2&iitm=true#x");
    // As URLSearchParams writes it back.
    expect(parseOriginal("file:///a/basic.js?dispatch-hook-original=&iitm=true")).toBe("file:///a/basic.js?iitm=true");
    expect(parseOriginal("file:///a/basic.js?dispatch-hook-original=")).toBe("file:///a/basic.js");
  });

  it("is not confused with a file or a parameter that merely contains the name", () => {
    expect(parseOriginal("file:///a/dispatch-hook-original/basic.js")).toBeUndefined();
    expect(parseOriginal("file:///a/basic.js?dispatch-hook-originals")).toBeUndefined();
    expect(parseOriginal("file:///a/basic.js?x=dispatch-hook-original")).toBeUndefined();
    expect(parseOriginal("file:///a/basic.js?dispatch-hook-original=1")).toBeUndefined();
    expect(parseOriginal("file:///a/basic.js")).toBeUndefined();
    expect(parseOriginal("file:///a/basic.js#dispatch-hook-original")).toBeUndefined();
  });
});
