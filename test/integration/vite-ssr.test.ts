// Vite's SSR dev server with dispatch-hook/vite and no Node loader: a framework installed in node_modules is
// externalized by Vite (Node loads it), so its table never got the plugin's registrations, and the audit said ok.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lastJson, makeTree, repoRoot, run, type Tree } from "./fixture.js";

function ssrApp(type: "module" | "commonjs"): Tree {
  const esm = type === "module";
  return {
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "node_modules/vite": { symlink: join(repoRoot, "node_modules/vite") },
    "node_modules/tensorkit/package.json": JSON.stringify({
      name: "tensorkit",
      type,
      exports: { "./*": "./*" },
      dispatchHook: { backends: { mapb: { module: "./backends/mapb.js", export: "table" } } },
    }),
    "node_modules/tensorkit/backends/mapb.js": esm ? "export const table = new Map();\n" : "exports.table = new Map();\n",
    "node_modules/tensorkit/ops.js": esm ? "export class Pool {}\n" : "exports.Pool = class Pool {};\n",
    "node_modules/kit-ops/package.json": JSON.stringify({
      name: "kit-ops",
      type: "module",
      dispatchHook: { registrations: { mapb: "./mapb.js" }, expects: { mapb: ["Pool"] } },
    }),
    "node_modules/kit-ops/mapb.js":
      'import { register } from "dispatch-hook";\nimport { Pool } from "tensorkit/ops.js";\nregister("mapb", Pool, () => "pool on mapb");\n',
    "package.json": JSON.stringify({
      name: "app",
      type: "module",
      dependencies: { tensorkit: "*", "kit-ops": "*", "dispatch-hook": "*", vite: "*" },
    }),
    "src/entry.js": [
      'import { table } from "tensorkit/backends/mapb.js";',
      'import { Pool } from "tensorkit/ops.js";',
      "export const probe = () => table.get(Pool)?.() ?? null;",
    ].join("\n"),
    "ssr.mjs": [
      'import { createServer } from "vite";',
      'import dispatchHook from "dispatch-hook/vite";',
      "const server = await createServer({ root: process.cwd(), configFile: false, appType: 'custom', logLevel: 'silent',",
      "  server: { middlewareMode: true, ws: false }, plugins: [dispatchHook()] });",
      'const { probe } = await server.ssrLoadModule("/src/entry.js");',
      "console.log(JSON.stringify({ landed: probe() }));",
      "await server.close();",
    ].join("\n"),
  };
}

// (VITEST unset: these tests run under Vitest, which the plugin would take the server for.)
describe("Vite's SSR dev server (dispatch-hook/vite, no loader)", () => {
  it("an ES framework in node_modules is kept in Vite's graph: the plugin's registration lands, and strict passes", async () => {
    const result = await run(makeTree(ssrApp("module")), ["ssr.mjs"], { DISPATCH_HOOK_AUDIT: "strict", VITEST: undefined });
    expect(lastJson(result.stdout)).toEqual({ landed: "pool on mapb" });
    expect(result.code).toBe(0);
  });

  it("a CommonJS framework in node_modules is left to Node, with a warning that names it and the loader", async () => {
    const result = await run(makeTree(ssrApp("commonjs")), ["ssr.mjs"], { VITEST: undefined });
    expect(result.stderr).toContain("DISPATCH_HOOK_VITE_EXTERNAL");
    expect(result.stderr).toContain("tensorkit is a CommonJS package");
    expect(result.stderr).toContain("--import dispatch-hook/loader.mjs");
  });
});
