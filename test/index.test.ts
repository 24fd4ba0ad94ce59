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
      "provide",
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

  it("ships only dist and the loader, with types, and lists its entry points in the exports map", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.files).toEqual(["dist", "loader.mjs"]);
    // Only the loader runs on import; everything else is free of side effects.
    expect(pkg.sideEffects).toEqual(["./loader.mjs"]);
    // The shipped entry points are single-file bundles (start-up cost); types come from tsc.
    expect(pkg.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/bundle/index.js" });
    expect(pkg.exports["./package.json"]).toBe("./package.json");
    expect(pkg.exports["./loader.mjs"]).toBe("./loader.mjs");
    expect(pkg.exports["./hooks"]).toEqual({ types: "./dist/hooks/index.d.ts", default: "./dist/bundle/hooks.js" });
    expect(pkg.bin).toEqual({ "dispatch-hook": "./dist/bundle/cli.js" });
    expect(pkg.dependencies ?? {}).toEqual({});
  });
});
