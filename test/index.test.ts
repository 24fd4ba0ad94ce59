import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public API", () => {
  it("exports a small, fixed set of values", () => {
    expect(Object.keys(api).sort()).toEqual([
      "AuditLog",
      "DispatchHookError",
      "Dispatcher",
      "Registry",
      "createRegistry",
      "errorCodes",
      "isDispatcher",
      "register",
      "registry",
    ]);
  });

  it("register() is shorthand for the default registry and reports the plugin's own line", () => {
    class Shorthand {}
    const handle = api.register("numba", Shorthand, () => 1);
    try {
      expect(api.registry.pending("numba")).toContain(handle);
      const record = api.registry.verify().registrations.find((r) => r.id === handle.id);
      expect(record?.site).toMatch(/^test\/index\.test\.ts:\d+$/);
    } finally {
      handle.dispose();
    }
    expect(handle.state).toBe("disposed");
  });

  it("ships only dist, with types, and lists . and ./package.json in its exports map", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.files).toEqual(["dist"]);
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
    expect(pkg.exports["./package.json"]).toBe("./package.json");
    expect(pkg.dependencies ?? {}).toEqual({});
  });
});
