import { describe, expect, it } from "vitest";
import { windowInfo } from "../../src/runtime/window-info.js";

describe("windowInfo", () => {
  it("names a window by module instance and registration module, so two routes to one load share it", () => {
    const module = { url: "file:///t.js?copy=2", backend: "cpu", exportName: "t", format: "commonjs" as const };
    expect(windowInfo(module, { plugin: "p", url: "file:///r.js" })).toEqual({
      id: "file:///t.js?copy=2 file:///r.js",
      url: "file:///t.js?copy=2",
      backend: "cpu",
      plugin: "p",
      module: "file:///r.js",
    });
  });
});
