/**
 * DISPATCH_HOOK_AUDIT, value by value, in real processes: the modes and the usual booleans in any
 * case; anything else is a warning that names the variable and what it accepts, and the audit stays
 * off. Before, "false" turned the audit on.
 */
import { describe, expect, it } from "vitest";
import { loader, makeTree, run } from "./fixture.js";
import { frameworkEsm, plugin } from "./trees.js";

const app = {
  ...frameworkEsm,
  ...plugin("tensorlab", true),
  "main.mjs": 'await import("tensorlab/link/numba/dispatch/basic.js");\n',
  // ml-ops expects PoolLayer on jax too, and registers nothing there: loading jax misses.
  "node_modules/ml-ops/package.json": JSON.stringify({
    name: "ml-ops",
    type: "module",
    exports: { ".": "./index.js", "./*": "./*" },
    dispatchHook: { registrations: { numba: "./dispatch/numba.js" }, expects: { numba: ["PoolLayer"], jax: ["PoolLayer"] } },
  }),
  "miss.mjs": 'await import("tensorlab/link/jax/dispatch/basic.js");\n',
};

describe("DISPATCH_HOOK_AUDIT", () => {
  const dir = makeTree(app);
  const withValue = (value: string) => run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: value });

  it.each(["false", "FALSE", "0", "no", "Off", ""])("%j: off, silent", async (value) => {
    const result = await withValue(value);
    expect(result.stderr).not.toContain("dispatch-hook audit");
    expect(result.stderr).not.toContain("DISPATCH_HOOK_AUDIT_MODE");
    expect(result.code).toBe(0);
  });

  it.each(["true", "Yes", "1", "ON", "report"])("%j: the table, in report mode", async (value) => {
    const result = await withValue(value);
    expect(result.stderr).toContain("dispatch-hook audit (report):");
    expect(result.stderr).toContain("PoolLayer");
    expect(result.code).toBe(0);
  });

  it("STRICT: strict, which fails the process on a problem", async () => {
    const result = await run(dir, ["--import", loader, "miss.mjs"], { DISPATCH_HOOK_AUDIT: "STRICT" });
    expect(result.stderr).toContain("dispatch-hook audit (strict):");
    expect(result.stderr).toContain("[missing] PoolLayer on jax");
    expect(result.code).toBe(1);
    const off = await run(dir, ["--import", loader, "miss.mjs"], { DISPATCH_HOOK_AUDIT: "false" });
    expect(off.code).toBe(0);
  });

  it("anything else: a warning naming the variable and the accepted values; the audit stays off", async () => {
    const result = await withValue("enabled");
    expect(result.stderr).toContain("[DISPATCH_HOOK_AUDIT_MODE]");
    expect(result.stderr).toContain('DISPATCH_HOOK_AUDIT="enabled" is not a value it accepts');
    expect(result.stderr).not.toContain("dispatch-hook audit (");
    expect(result.code).toBe(0);
  });
});
