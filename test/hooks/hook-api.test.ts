import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Discovery } from "../../src/hooks/discovery.js";
import { attachHooks, runtimeLocation } from "../../src/hooks/hook-api.js";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { thrown } from "../helpers.js";

describe("runtimeLocation", () => {
  it("finds the runtime bundles that generated code imports and epilogues require", () => {
    const { esm, cjs } = runtimeLocation();
    expect(existsSync(fileURLToPath(esm))).toBe(true);
    expect(existsSync(cjs)).toBe(true);
    expect(cjs.endsWith("runtime.cjs")).toBe(true);
  });
});

describe("attachHooks", () => {
  it.skipIf(hookMode() !== "register")("refuses registerHooks where Node lacks it, with a code, and attaches nothing", () => {
    const discovery = new Discovery({ packages: false });
    expect(thrown(() => attachHooks("registerHooks", discovery, { packages: false }, () => {})).code).toBe("ERR_DISPATCH_HOOK_UNAVAILABLE");
  });
});
