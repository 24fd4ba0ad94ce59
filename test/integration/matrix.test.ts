/**
 * The matrix: registration before load, after load, and from a declared registration module;
 * × ESM static import, dynamic import, CommonJS require from ESM, and a CommonJS main;
 * × main thread and worker. Where the Node version cannot see a case, the audit must say so.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { lastJson, loader, makeTree, nodeBinary, nodeVersion, run } from "./fixture.js";
import { frameworkCjs, frameworkEsm, plugin } from "./trees.js";

type Load = "static" | "dynamic" | "require" | "require-esm" | "cjs-main";
type Timing = "before" | "after" | "module";

/** The ES module framework for import and for require(esm); the CommonJS one for require and a CommonJS main. */
const esmFramework = (load: Load) => load === "static" || load === "dynamic" || load === "require-esm";
const dispatchModule = (load: Load) =>
  esmFramework(load) ? "tensorlab/link/numba/dispatch/basic.js" : "tensorlab-cjs/link/numba/dispatch/basic.js";

/** The app's entry: loads the backend the given way, registers at the given time, prints JSON. */
function entry(load: Load, timing: Timing): { file: string; source: string } {
  const target = dispatchModule(load);
  const report = [
    'const { registry } = await import("dispatch-hook");',
    'const { PoolLayer } = await import("ml-ops");',
    "const impl = table.get(PoolLayer);",
    "const report = registry.verify();",
    "console.log(JSON.stringify({ landed: typeof impl === 'function' && impl() === 'pooled', problems: report.problems.map((p) => p.kind + ':' + p.message) }));",
  ];
  if (load === "cjs-main") {
    const lines = [
      timing === "before" ? 'require("ml-ops/register-now.js");' : "",
      `const table = require(${JSON.stringify(target)}).numbaFuncify;`,
      timing === "after" ? 'require("ml-ops/register-now.js");' : "",
      `(async () => { ${report.join(" ")} })();`,
    ];
    return { file: "main.cjs", source: lines.join("\n") };
  }
  const lines: string[] = [];
  if (load === "static") {
    if (timing === "before") lines.push('import "ml-ops/register-now.js";');
    lines.push(`import { numbaFuncify as table } from ${JSON.stringify(target)};`);
    if (timing === "after") lines.push('await import("ml-ops/register-now.js");');
  } else {
    if (timing === "before") lines.push('await import("ml-ops/register-now.js");');
    if (load === "dynamic") lines.push(`const table = (await import(${JSON.stringify(target)})).numbaFuncify;`);
    else
      lines.push(
        'import { createRequire } from "node:module";',
        `const table = createRequire(import.meta.url)(${JSON.stringify(target)}).numbaFuncify;`,
      );
    if (timing === "after") lines.push('await import("ml-ops/register-now.js");');
  }
  lines.push(...report);
  return { file: "main.mjs", source: lines.join("\n") };
}

const mode = hookMode(nodeVersion);
/** require() of an ES module: Node 20.19+, 22.12+, 24, 26 (not the 20.16 minimum). */
const requireModule =
  execFileSync(nodeBinary, ["-p", "process.features.require_module === true"], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  }).trim() === "true";
/** The cases that require() an ES module: the framework itself, or the plugin's register-now.js from a CommonJS main. */
const needsRequireModule = (load: Load, timing: Timing) => load === "require-esm" || (load === "cjs-main" && timing !== "module");
/** Node 20's off-thread hooks never see require(). */
const visible = (load: Load) => mode === "registerHooks" || load === "static" || load === "dynamic";

// require(esm) of a dispatch module works because the epilogue has no top-level await.
const loads: Load[] = ["static", "dynamic", "require", "require-esm", "cjs-main"];
const timings: Timing[] = ["before", "after", "module"];

describe(`the matrix on Node ${nodeVersion} (${mode})`, () => {
  for (const load of loads) {
    for (const timing of timings) {
      for (const thread of ["main", "worker"] as const) {
        it.skipIf(needsRequireModule(load, timing) && !requireModule)(`${timing} load × ${load} × ${thread} thread`, async () => {
          const framework = esmFramework(load) ? "tensorlab" : "tensorlab-cjs";
          const main = entry(load, timing);
          const files = { ...frameworkEsm, ...frameworkCjs, ...plugin(framework, timing === "module"), [main.file]: main.source };
          if (thread === "worker") {
            files["worker.mjs"] = [
              'import { Worker } from "node:worker_threads";',
              `const worker = new Worker(new URL(${JSON.stringify(`./${main.file}`)}, import.meta.url));`,
              'worker.on("error", (e) => { console.error(e); process.exitCode = 3; });',
              'worker.on("exit", (code) => { if (code !== 0) process.exitCode = code; });',
            ].join("\n");
          }
          const dir = makeTree(files);
          const result = await run(dir, ["--import", loader, thread === "worker" ? "worker.mjs" : main.file], {
            DISPATCH_HOOK_AUDIT: "strict",
          });
          if (visible(load)) {
            expect(result.stderr).toBe("");
            expect(result.code).toBe(0);
            expect(lastJson(result.stdout)).toEqual({ landed: true, problems: [] });
          } else {
            // Out of the hooks' sight: not silent. The audit names the module and the reason.
            const out = lastJson(result.stdout);
            expect(out.landed).toBe(false);
            expect(JSON.stringify(out.problems)).toContain("was loaded with require()");
            expect(result.code).toBe(1);
            expect(result.stderr).toContain("dispatch-hook audit (strict)");
            expect(result.stderr).toContain(`${dispatchModule(load)}`);
          }
        });
      }
    }
  }
});
