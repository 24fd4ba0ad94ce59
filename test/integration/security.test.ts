/** Nobody gets in where they do not belong: what the hook touches, and what config can name. */
import { mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { lastJson, loader, makeTree, repoRoot, run } from "./fixture.js";
import { frameworkEsm, plugin } from "./trees.js";

const hooks = pathToFileURL(join(repoRoot, "dist/hooks/index.js")).href;

describe("security", () => {
  it("the hook instruments only the modules a config names", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "data.json": "{}",
      "main.mjs": [
        `import { install } from ${JSON.stringify(hooks)};`,
        'import { registry } from "dispatch-hook";',
        "const installation = install({ registry, warnings: false });",
        'await import("tensorlab");',
        'await import("ml-ops");',
        'await import("./data.json", { with: { type: "json" } });',
        'await import("node:path");',
        'await import("tensorlab/link/numba/dispatch/basic.js");',
        "console.log(JSON.stringify({ instrumented: installation.instrumented().map((u) => u.slice(u.indexOf('node_modules'))) }));",
      ].join("\n"),
    });
    // Node 20.16 still calls JSON modules experimental; that warning is not ours.
    const result = await run(dir, ["--disable-warning=ExperimentalWarning", "main.mjs"]);
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ instrumented: ["node_modules/tensorlab/link/numba/dispatch/basic.js"] });
  });

  it("with no config at all, nothing is instrumented", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      // The framework declares nothing either.
      "node_modules/tensorlab/package.json": JSON.stringify({ name: "tensorlab", type: "module", exports: { "./link/*": "./link/*" } }),
      "package.json": JSON.stringify({ name: "bare", type: "module" }),
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "main.mjs": [
        `import { install } from ${JSON.stringify(hooks)};`,
        "const installation = install({ warnings: false });",
        'await import("tensorlab/link/numba/dispatch/basic.js");',
        "console.log(JSON.stringify({ rules: installation.config.rules.length, instrumented: installation.instrumented() }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"]);
    expect(lastJson(result.stdout)).toEqual({ rules: 0, instrumented: [] });
  });

  it("paths with quotes, newlines, */ and </script> cannot inject code through the epilogue", async () => {
    // "/" separates path segments, so "*/" and "</script>" span directories here, as they would in a
    // URL. (A "*" above a package breaks Node's own exports-pattern resolution, so it sits below.)
    const base = makeTree({});
    const hostile = join(base, `it's "odd"\n </script> ü`);
    mkdirSync(hostile, { recursive: true });
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorlab: "*", "ml-ops": "*", "dispatch-hook": "*" },
        dispatchHook: { backends: { jax: { module: './we"ird*/ <x>/jax.js', export: "jaxFuncify" } } },
      }),
      'we"ird*/ <x>/jax.js': 'import { Dispatcher } from "dispatch-hook";\nexport const jaxFuncify = new Dispatcher({ backend: "jax" });\n',
      "main.mjs": [
        'import { numbaFuncify } from "tensorlab/link/numba/dispatch/basic.js";',
        "import { jaxFuncify } from './we\"ird*/ <x>/jax.js';",
        'import { PoolLayer } from "ml-ops";',
        'import { register, registry } from "dispatch-hook";',
        'register("jax", PoolLayer, () => "jax");',
        "console.log(JSON.stringify({ numba: numbaFuncify.resolve(new PoolLayer())(), jax: jaxFuncify.resolve(new PoolLayer())(), ok: registry.verify({ backends: ['numba', 'jax'] }).ok, injected: globalThis.injected ?? null }));",
      ].join("\n"),
    });
    const app = join(hostile, "app");
    renameSync(dir, app);
    const result = await run(app, ["--import", loader, "main.mjs"]);
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ numba: "pooled", jax: "jax", ok: true, injected: null });
  });
});
