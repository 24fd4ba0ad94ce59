/**
 * The audit tells the truth: in every setup below, a registration either lands, or the strict audit
 * exits non-zero naming the cause. Each ran "ok" over a miss before the loader learned to find its
 * configuration from the program, to hear every copy and every registry, and to check expectations
 * on every backend that loaded.
 */
import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { appJson, lastJson, loader, makeTree, nodeVersion, repoRoot, run, type Tree } from "./fixture.js";
import { frameworkEsm, plugin } from "./trees.js";

const strict = { DISPATCH_HOOK_AUDIT: "strict" };
const landed = [
  'const { PoolLayer } = await import("ml-ops");',
  'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
  "let landed; try { landed = numbaFuncify.resolve(new PoolLayer())(); } catch (e) { landed = e.code; }",
  "console.log(JSON.stringify({ landed }));",
].join("\n");

/** A second installed copy of dispatch-hook (not a symlink: its own files, so its own module instances). */
function secondCopy(dir: string, at: string): void {
  const target = join(dir, at);
  mkdirSync(target, { recursive: true });
  for (const entry of ["package.json", "loader.mjs", "dist"]) cpSync(join(repoRoot, entry), join(target, entry), { recursive: true });
}

describe("1. node started from another directory", () => {
  it("the demo, started from an empty temporary directory, lands every registration under strict", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "dispatch-hook-cwd-"));
    const result = await run(elsewhere, ["--import", loader, join(repoRoot, "examples/ordering-bug/hook-way.mjs")], strict);
    expect(result.stderr).toBe("");
    expect(result.stdout.match(/matches the reference: true/g)).toHaveLength(4);
    expect(result.code).toBe(0);
  });

  it("a monorepo root whose package.json lacks the dependencies: the app's own package counts", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "monorepo", private: true }),
      ...Object.fromEntries(Object.entries({ ...frameworkEsm, ...plugin("tensorlab", true) }).map(([path, v]) => [`apps/app/${path}`, v])),
      "apps/app/main.mjs": landed,
    });
    const result = await run(dir, ["--import", loader, "apps/app/main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.code).toBe(0);
  });

  it("a loader that finds nothing to watch says so, naming where it looked, and strict exits 1", async () => {
    const dir = makeTree({ "package.json": JSON.stringify({ name: "plain" }), "main.mjs": 'console.log("ran");\n' });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(result.stdout).toContain("ran");
    expect(result.stderr).toContain("found no backend declaration, so it watches nothing");
    expect(result.stderr).toContain(join(dir, "package.json"));
    expect(result.stderr).not.toContain("ok:");
    expect(result.code).toBe(1);
    const report = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(report.stderr).toContain("watches nothing");
  });

  it("a loader with nothing to watch beside a framework that announces its own table: no problem, and strict passes", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "native", type: "module", dependencies: { "dispatch-hook": "*" } }),
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "main.mjs": [
        'import { announce, Dispatcher, register } from "dispatch-hook";',
        "class Conv {}",
        'register("cpu", Conv, () => "conv");',
        'const table = new Dispatcher({ backend: "cpu" });',
        'announce("cpu", table);',
        "console.log(JSON.stringify({ got: table.resolve(new Conv())() }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ got: "conv" });
    expect(result.stderr).not.toContain("watches nothing");
    expect(result.code).toBe(0);
  });
});

describe("2. a plugin that is not a direct dependency", () => {
  it("app → toolkit → framework + plugin: the plugin's registration module loads with its backend, though nothing imported it", async () => {
    const tree = { ...frameworkEsm, ...plugin("tensorlab", true) };
    const dir = makeTree({
      ...tree,
      "package.json": appJson({ type: "module", dependencies: { toolkit: "*" } }),
      "node_modules/toolkit/package.json": JSON.stringify({
        name: "toolkit",
        type: "module",
        exports: "./index.js",
        dependencies: { tensorlab: "*", "ml-ops": "*", "dispatch-hook": "*" },
      }),
      "node_modules/toolkit/index.js": [
        "export async function numba() {",
        '  return (await import("tensorlab/link/numba/dispatch/basic.js")).numbaFuncify;',
        "}",
        "export async function op() {",
        '  const { PoolLayer } = await import("ml-ops");',
        "  return new PoolLayer();",
        "}",
      ].join("\n"),
      "main.mjs": [
        'import { numba, op } from "toolkit";',
        "const table = await numba();",
        "console.log(JSON.stringify({ landed: table.resolve(await op())() }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.code).toBe(0);
  });

  // A plugin that only a dependency of the app depends on (app → toolkit → plugin, the plugin a peer of the
  // framework) is learned when the program first imports it: after its backend loaded, its registration module
  // never ran for that table. The audit said ok ("every registration landed"): nothing had registered.
  function latePlugin(main: string): string {
    const tree = { ...frameworkEsm, ...plugin("tensorlab", true) };
    return makeTree({
      ...tree,
      "node_modules/ml-ops/package.json": JSON.stringify({
        name: "ml-ops",
        type: "module",
        exports: { ".": "./index.js", "./*": "./*" },
        peerDependencies: { tensorlab: "*", "dispatch-hook": "*" },
        dispatchHook: { registrations: { numba: "./dispatch/numba.js" } },
      }),
      "package.json": appJson({ type: "module", dependencies: { tensorlab: "*", toolkit: "*", "dispatch-hook": "*" } }),
      "node_modules/toolkit/package.json": JSON.stringify({
        name: "toolkit",
        type: "module",
        exports: "./index.js",
        dependencies: { "ml-ops": "*" },
      }),
      "node_modules/toolkit/index.js": 'export { PoolLayer } from "ml-ops";\n',
      "main.mjs": main,
    });
  }

  it("a plugin the loader learns of only after its backend loaded: its registration module never ran, and strict names it", async () => {
    const dir = latePlugin(
      [
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("toolkit");',
        "let landed; try { landed = numbaFuncify.resolve(new PoolLayer())(); } catch (e) { landed = e.code; }",
        "console.log(JSON.stringify({ landed }));",
      ].join("\n"),
    );
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: "ERR_DISPATCH_NO_IMPL" });
    expect(result.stderr).toContain("ml-ops's registration module for numba");
    expect(result.stderr).toContain("never ran: the loader learned of ml-ops");
    expect(result.code).toBe(1);
  });

  it("the same plugin, its registration module imported by the app after the backend loaded: it ran, and strict passes", async () => {
    const dir = latePlugin(
      [
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("toolkit");',
        'await import("ml-ops/dispatch/numba.js");',
        "console.log(JSON.stringify({ landed: numbaFuncify.resolve(new PoolLayer())() }));",
      ].join("\n"),
    );
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });
});

describe("2b. a plugin's registration for a misspelt backend", () => {
  // Its registration module for numba registers for "numbaa": the registration waited for a backend that never loads, and
  // strict passed ("1 waits for numbaa, which never loaded"; the did-you-mean only in report mode).
  // First made a strict problem, then withdrawn: "gpu" beside "cpu" is as near as "cpuu", and a plugin may register for a
  // backend the program announces itself (a framework's native route), as the docs promise passes. doctor --load notes it.
  it("strict passes, as for any registration waiting for a backend that never loaded; the report says what waits (doctor --load names the nearest backend)", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      // No expects: those would fail strict on numba, whatever the registration's backend.
      "node_modules/ml-ops/package.json": JSON.stringify({
        name: "ml-ops",
        type: "module",
        exports: { ".": "./index.js", "./*": "./*" },
        dispatchHook: { registrations: { numba: "./dispatch/numba.js" } },
      }),
      "node_modules/ml-ops/dispatch/numba.js": [
        'import { register } from "dispatch-hook";',
        'import { PoolLayer, poolNumba } from "../index.js";',
        'register("numbaa", PoolLayer, poolNumba);',
      ].join("\n"),
      "main.mjs": [
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("ml-ops");',
        "let landed; try { landed = numbaFuncify.resolve(new PoolLayer())(); } catch (e) { landed = e.code; }",
        "console.log(JSON.stringify({ landed }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: "ERR_DISPATCH_NO_IMPL" });
    expect(result.code).toBe(0);
    const report = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(report.stderr).toContain("1 waits for numbaa, which never loaded");
  });

  // The check above, first written, failed strict over a registration for "numbb", a backend the framework's {backend}
  // pattern declares (its module exists) and the app never loaded: "did you mean numba?".
  it("a registration for a backend a {backend} pattern declares, never loaded, is no problem", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/ml-ops/package.json": JSON.stringify({
        name: "ml-ops",
        type: "module",
        exports: { ".": "./index.js", "./*": "./*" },
        dispatchHook: { registrations: { numba: "./dispatch/numba.js" } },
      }),
      "node_modules/ml-ops/dispatch/numba.js": [
        'import { register } from "dispatch-hook";',
        'import { PoolLayer, poolNumba } from "../index.js";',
        'register("numba", PoolLayer, poolNumba);',
        'register("numbb", PoolLayer, poolNumba);',
      ].join("\n"),
      // A backend one letter from numba, whose module the pattern finds.
      "node_modules/tensorlab/link/numbb/dispatch/basic.js":
        'import { Dispatcher } from "dispatch-hook";\nexport const numbbFuncify = new Dispatcher({ backend: "numbb" });\n',
      "package.json": appJson({ type: "module", dependencies: { tensorlab: "*", "ml-ops": "*", "dispatch-hook": "*" } }),
      "main.mjs": landed,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });
});

describe("3. two installed copies of dispatch-hook", () => {
  function twoCopies(main: string) {
    const dir = makeTree({ ...frameworkEsm, ...plugin("tensorlab", false), "main.mjs": main });
    // ml-ops brings its own copy; the app and tensorlab use the top-level one.
    secondCopy(dir, "node_modules/ml-ops/node_modules/dispatch-hook");
    return dir;
  }

  it("registrations made through the second copy appear in the one exit audit", async () => {
    const dir = twoCopies(`import "ml-ops/register-now.js";\n${landed}`);
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.stderr).toMatch(/PoolLayer\s+applied/);
    expect(result.stderr).not.toContain("(no registrations)");
    expect(result.stderr).toContain("ok: every registration landed");
  });

  it("a conflict made through the second copy fails strict, as it would with one copy", async () => {
    const dir = twoCopies(
      [
        'import "ml-ops/register-now.js";',
        'import { register } from "./node_modules/ml-ops/node_modules/dispatch-hook/dist/bundle/index.js";',
        'import { PoolLayer } from "ml-ops";',
        'try { register("numba", PoolLayer, () => "other"); } catch (e) { console.log(JSON.stringify({ refused: e.code })); }',
      ].join("\n"),
    );
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ refused: "ERR_DISPATCH_CONFLICT" });
    expect(result.stderr).toContain("[conflict] PoolLayer already has an implementation on numba");
    expect(result.code).toBe(1);
  });

  it("the default registry's assertComplete() and verify() answer for the other copy's default registry too", async () => {
    const dir = twoCopies(
      [
        'import { registry } from "dispatch-hook";',
        // ml-ops's copy registers for numba, which this program never loads.
        'import "ml-ops/register-now.js";',
        'const out = { verify: registry.verify({ backends: ["numba"] }).ok };',
        'try { registry.assertComplete({ backends: ["numba"] }); out.assert = "passed"; } catch (e) { out.assert = e.code; }',
        "console.log(JSON.stringify(out));",
      ].join("\n"),
    );
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(lastJson(result.stdout)).toEqual({ verify: false, assert: "ERR_DISPATCH_INCOMPLETE" });
  });
});

describe("4. expectations do not depend on load order", () => {
  it("an expected op on a backend that loaded is missing, whichever backends loaded first; the others are 'not loaded'", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/ml-ops/package.json": JSON.stringify({
        name: "ml-ops",
        type: "module",
        exports: { ".": "./index.js", "./*": "./*" },
        dependencies: { tensorlab: "*" },
        // It ships no numba registration module, but says it expects PoolLayer there.
        dispatchHook: { registrations: { jax: "./dispatch/jax.js" }, expects: { numba: ["PoolLayer"], jax: ["PoolLayer"] } },
      }),
      "node_modules/ml-ops/dispatch/jax.js":
        'import { register } from "dispatch-hook";\nimport { PoolLayer } from "../index.js";\nregister("jax", PoolLayer, () => "jax");\n',
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorlab: "*", "ml-ops": "*", "dispatch-hook": "*" },
      }),
      "numba-only.mjs": 'await import("tensorlab/link/numba/dispatch/basic.js");\n',
      "jax-then-numba.mjs":
        'await import("tensorlab/link/jax/dispatch/basic.js");\nawait import("tensorlab/link/numba/dispatch/basic.js");\n',
    });
    for (const main of ["numba-only.mjs", "jax-then-numba.mjs"]) {
      const result = await run(dir, ["--import", loader, main], strict);
      expect(result.stderr).toContain("[missing] PoolLayer on numba was expected");
      expect(result.code).toBe(1);
    }
    const numbaOnly = await run(dir, ["--import", loader, "numba-only.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(numbaOnly.stderr).toContain("jax not loaded");
    expect(numbaOnly.stderr).toContain("numba loaded (1 table)");
  });
});

describe("4b. an entry a plugin writes into one table directly", () => {
  // The registration module writes into the table it imports, outside any registry: that entry is
  // in one module instance's table only, and a later instance (?v=2), served once the registration
  // module has run, never gets it.
  const tree = {
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "node_modules/tensorkit/package.json": JSON.stringify({
      name: "tensorkit",
      type: "module",
      exports: { "./*": "./*" },
      dispatchHook: { backends: { cpu: { module: "./backends/cpu.js", export: "table" } } },
    }),
    "node_modules/tensorkit/backends/cpu.js":
      'import { Dispatcher } from "dispatch-hook";\nexport const table = new Dispatcher({ name: "cpu table", backend: "cpu" });\n',
    "node_modules/kit-direct/package.json": JSON.stringify({
      name: "kit-direct",
      type: "module",
      exports: { "./*": "./*" },
      dispatchHook: { registrations: { cpu: "./cpu.js" }, expects: { cpu: ["Conv"] } },
    }),
    "node_modules/kit-direct/ops.js": "export class Conv {}\n",
    "node_modules/kit-direct/cpu.js": [
      'import { table } from "tensorkit/backends/cpu.js";',
      'import { Conv } from "./ops.js";',
      'table.register(Conv, () => "direct conv");',
      "",
    ].join("\n"),
    "package.json": appJson({ type: "module", dependencies: { tensorkit: "*", "kit-direct": "*", "dispatch-hook": "*" } }),
    "main.mjs": [
      'const { Conv } = await import("kit-direct/ops.js");',
      'const base = new URL("./node_modules/tensorkit/backends/cpu.js", import.meta.url).href;',
      'const first = process.argv[2] === "query" ? base + "?v=1" : "tensorkit/backends/cpu.js";',
      "const out = {};",
      'for (const [name, specifier] of [["first", first], ["second", base + "?v=2"]]) {',
      "  const { table } = await import(specifier);",
      "  try { out[name] = table.resolve(new Conv())(); } catch (e) { out[name] = e.code; }",
      "}",
      "console.log(JSON.stringify(out));",
    ].join("\n"),
  };

  it("a second module instance that lacks it fails strict, naming that instance", async () => {
    const dir = makeTree(tree);
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ first: "direct conv", second: "ERR_DISPATCH_NO_IMPL" });
    expect(result.stderr).toContain("[missing] Conv on cpu was expected");
    expect(result.stderr).toContain("cpu.js?v=2");
    expect(result.code).toBe(1);
  });

  it("every instance the app uses lacks it (the plugin wrote into a third): strict fails", async () => {
    const dir = makeTree(tree);
    const result = await run(dir, ["--import", loader, "main.mjs", "query"], strict);
    expect(lastJson(result.stdout)).toEqual({ first: "ERR_DISPATCH_NO_IMPL", second: "ERR_DISPATCH_NO_IMPL" });
    expect(result.stderr).toContain("[missing] Conv on cpu was expected");
    expect(result.code).toBe(1);
  });
});

describe("4e. a registration that landed, then went from its table", () => {
  // The framework fills its defaults late, with its own register(), or unregisters: the table no
  // longer holds what landed, so the app dispatches to something else.
  const main = (extra: string[]) =>
    [
      'import { Dispatcher, createRegistry, registry } from "dispatch-hook";',
      'import { numbaFuncify } from "tensorlab/link/numba/dispatch/basic.js";',
      'import { PoolLayer } from "ml-ops";',
      "const mode = process.argv[2];",
      'if (mode === "clobber") numbaFuncify.register(PoolLayer, () => "framework default");',
      'if (mode === "unregister") numbaFuncify.unregister(PoolLayer);',
      ...extra,
      "let now; try { now = numbaFuncify.resolve(new PoolLayer())(); } catch (e) { now = e.code; }",
      "const v = registry.verify();",
      "console.log(JSON.stringify({ now, ok: v.ok, kinds: v.problems.map((p) => p.kind) }));",
    ].join("\n");
  const tree = (extra: string[] = []) => ({ ...frameworkEsm, ...plugin("tensorlab", true), "main.mjs": main(extra) });

  for (const [mode, now, words] of [
    ["clobber", "framework default", "replaced the entry"],
    ["unregister", "ERR_DISPATCH_NO_IMPL", "removed the entry"],
  ] as const) {
    it(`${mode}: verify() and strict name it, and strict exits 1`, async () => {
      const dir = makeTree(tree());
      const result = await run(dir, ["--import", loader, "main.mjs", mode], strict);
      expect(lastJson(result.stdout)).toEqual({ now, ok: false, kinds: ["displaced"] });
      expect(result.stderr).toContain("[displaced] PoolLayer on numba");
      expect(result.stderr).toContain(words);
      expect(result.code).toBe(1);
    });
  }

  it("another registry's audited override is no such problem, and the table left as it was is none either", async () => {
    const override = ['if (mode === "override") createRegistry().register("numba", PoolLayer, () => "app", { override: true });'];
    const dir = makeTree(tree(override));
    const overridden = await run(dir, ["--import", loader, "main.mjs", "override"], strict);
    expect(lastJson(overridden.stdout)).toEqual({ now: "app", ok: true, kinds: [] });
    const untouched = await run(dir, ["--import", loader, "main.mjs", "none"], strict);
    expect(lastJson(untouched.stdout)).toEqual({ now: "pooled", ok: true, kinds: [] });
    expect(untouched.code).toBe(0);
  });
});

describe("4f. a declared export the dispatch module does not have", () => {
  /** A framework whose gpu declaration names "tabel"; its module exports "table". */
  const typoedExport: Tree = {
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "node_modules/fw/package.json": JSON.stringify({
      name: "fw",
      type: "module",
      exports: { "./*": "./*" },
      dispatchHook: { backends: { gpu: { module: "./gpu.js", export: "tabel" } } },
    }),
    "node_modules/fw/gpu.js":
      'import { Dispatcher } from "dispatch-hook";\nexport const table = new Dispatcher({ name: "gpu table", backend: "gpu" });\n',
    "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { fw: "*", "dispatch-hook": "*" } }),
  };

  it("a registration for it waits, and both its problem and the backends line say the module loaded without that export", async () => {
    const dir = makeTree({
      ...typoedExport,
      "main.mjs": 'import { register } from "dispatch-hook";\nregister("gpu", class Pool {}, () => 1);\nawait import("fw/gpu.js");\n',
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(result.stderr).toMatch(
      /\[pending\] Pool on gpu .* is still pending: .*gpu\.js was loaded as backend gpu's dispatch module, but it has no export "tabel"/,
    );
    expect(result.stderr).not.toContain("nothing watches the module");
    expect(result.stderr).toContain("gpu loaded, no table at its declared export");
    expect(result.code).toBe(1);
  });

  // Written from a review: the README's own pattern, with a helper module beside the backends, failed
  // strict with "[table] …common.js was loaded as backend common's dispatch module, but it has no export".
  it("a helper module that only a {backend} pattern matches, which nothing registers for, is no problem; a typo in the export for a backend a plugin wants still is", async () => {
    const helper = (exportName: string): Tree => ({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/fw/package.json": JSON.stringify({
        name: "fw",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: { backends: { "*": { module: "./backends/{backend}.js", export: exportName } } },
      }),
      "node_modules/fw/backends/common.js": 'export const label = (name) => name + " table";\n',
      "node_modules/fw/backends/cpu.js":
        'import { Dispatcher } from "dispatch-hook";\nimport { label } from "./common.js";\nexport const table = new Dispatcher({ name: label("cpu"), backend: "cpu" });\n',
      "node_modules/fw/ops.js": "export class Conv {}\n",
      "node_modules/kit/package.json": JSON.stringify({
        name: "kit",
        type: "module",
        dispatchHook: { registrations: { cpu: "./cpu.js" }, expects: { cpu: ["Conv"] } },
      }),
      "node_modules/kit/cpu.js":
        'import { register } from "dispatch-hook";\nimport { Conv } from "fw/ops.js";\nregister("cpu", Conv, () => "conv on cpu");\n',
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { fw: "*", kit: "*", "dispatch-hook": "*" } }),
      "main.mjs":
        'const { table } = await import("fw/backends/cpu.js");\nconst { Conv } = await import("fw/ops.js");\nconsole.log(table.resolve(new Conv())());\n',
    });
    const clean = await run(makeTree(helper("table")), ["--import", loader, "main.mjs"], strict);
    expect(clean.stdout).toContain("conv on cpu");
    expect(clean.stderr).not.toContain("[table]");
    expect(clean.code).toBe(0);
    const typo = await run(makeTree(helper("tabel")), ["--import", loader, "main.mjs"], strict);
    expect(typo.stderr).toMatch(/cpu\.js was loaded as backend cpu's dispatch module, but it has no export "tabel"/);
    expect(typo.stderr).not.toMatch(/common\.js was loaded as backend common's dispatch module/);
    expect(typo.code).toBe(1);
  });

  // Written from a review: no export name reached a CommonJS module that is itself the table, and the
  // registration stayed pending with "DISPATCH_HOOK_TABLE_REJECTED … got undefined".
  it('a CommonJS dispatch module that is itself the table (module.exports = new Dispatcher(…)), declared with export "default": the registration lands, imported and, where the hooks see require(), required', async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/tk/package.json": JSON.stringify({
        name: "tk",
        exports: { "./*": "./*" },
        dispatchHook: { backends: { cpu: { module: "./backends/cpu.js", export: "default" } } },
      }),
      "node_modules/tk/ops.js": "class Conv {}\nexports.Conv = Conv;\n",
      "node_modules/tk/backends/cpu.js":
        'const { Dispatcher } = require("dispatch-hook");\nmodule.exports = new Dispatcher({ name: "cpu table", backend: "cpu" });\n',
      "node_modules/pa/package.json": JSON.stringify({
        name: "pa",
        type: "module",
        dispatchHook: { registrations: { cpu: "./reg.js" }, expects: { cpu: ["Conv"] } },
      }),
      "node_modules/pa/reg.js":
        'import { register } from "dispatch-hook";\nimport ops from "tk/ops.js";\nregister("cpu", ops.Conv, () => "conv on cpu");\n',
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { tk: "*", pa: "*", "dispatch-hook": "*" } }),
      "imported.mjs":
        'import table from "tk/backends/cpu.js";\nimport ops from "tk/ops.js";\nconsole.log(table.resolve(new ops.Conv())());\n',
      "required.cjs":
        'const table = require("tk/backends/cpu.js");\nconst ops = require("tk/ops.js");\nconsole.log(table.resolve(new ops.Conv())());\n',
    });
    const imported = await run(dir, ["--import", loader, "imported.mjs"], strict);
    expect(imported.stdout).toContain("conv on cpu");
    expect(imported.code).toBe(0);
    if (hookMode(nodeVersion) !== "registerHooks") return;
    const required = await run(dir, ["--import", loader, "required.cjs"], strict);
    expect(required.stdout).toContain("conv on cpu");
    expect(required.code).toBe(0);
  });

  it("a miss on that table says the same, not that nothing signalled (found by a new user's trial)", async () => {
    const dir = makeTree({
      ...typoedExport,
      "main.mjs": [
        'import { register } from "dispatch-hook";',
        "class Pool {}",
        'register("gpu", Pool, () => 1);',
        'const { table } = await import("fw/gpu.js");',
        "try { table.resolve(new Pool()); } catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message })); }",
        "",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    const miss = lastJson(result.stdout) as { code: string; message: string };
    expect(miss.code, result.stderr).toBe("ERR_DISPATCH_NO_IMPL");
    expect(miss.message).toMatch(/gpu\.js was loaded as the gpu dispatch module, but it has no export "tabel" \(its exports: table\)/);
    expect(miss.message).not.toContain("signalled that it finished loading");
  });
});

describe("4c. a plugin whose declaration the loader cannot read", () => {
  for (const [name, field] of [
    ["a misspelt key", { registation: { numba: "./dispatch/numba.js" } }],
    ["expects that is not a list", { registrations: { numba: "./dispatch/numba.js" }, expects: { numba: "PoolLayer" } }],
    ["a field that is not an object", "yes"],
  ] as const) {
    it(`${name}: strict fails, naming the file and the key`, async () => {
      const tree: Tree = { ...frameworkEsm, ...plugin("tensorlab", true), "main.mjs": landed };
      const json = JSON.parse(tree["node_modules/ml-ops/package.json"] as string);
      tree["node_modules/ml-ops/package.json"] = JSON.stringify({ ...json, dispatchHook: field });
      const dir = makeTree(tree);
      const result = await run(dir, ["--import", loader, "main.mjs"], strict);
      expect(result.stderr).toContain("[loader]");
      expect(result.stderr).toContain(join(dir, "node_modules/ml-ops/package.json"));
      expect(result.code).toBe(1);
    });
  }
});

// Two backends declared on one module (cpu and gpu both ./tables.js, exports cpuTable and gpuTable): only the first was
// watched, the gpu registration module never ran, and strict and the audit said ok ("gpu not loaded").
describe("4g. two backends declared on one module", () => {
  it("the declaration is a problem naming both backends and the module: strict fails, and doctor finds it", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/fwk/package.json": JSON.stringify({
        name: "fwk",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: {
          backends: { cpu: { module: "./tables.js", export: "cpuTable" }, gpu: { module: "./tables.js", export: "gpuTable" } },
        },
      }),
      "node_modules/fwk/tables.js": "export class Conv {}\nexport const cpuTable = new Map();\nexport const gpuTable = new Map();\n",
      "node_modules/plug/package.json": JSON.stringify({
        name: "plug",
        type: "module",
        dispatchHook: { registrations: { cpu: "./cpu.js", gpu: "./gpu.js" } },
      }),
      "node_modules/plug/cpu.js":
        'import { register } from "dispatch-hook";\nimport { Conv } from "fwk/tables.js";\nregister("cpu", Conv, () => "cpu");\n',
      "node_modules/plug/gpu.js":
        'import { register } from "dispatch-hook";\nimport { Conv } from "fwk/tables.js";\nregister("gpu", Conv, () => "gpu");\n',
      "package.json": appJson({ type: "module", dependencies: { fwk: "*", plug: "*", "dispatch-hook": "*" } }),
      "main.mjs": [
        'const { Conv, cpuTable, gpuTable } = await import("fwk/tables.js");',
        "console.log(JSON.stringify({ cpu: cpuTable.get(Conv)?.() ?? null, gpu: gpuTable.get(Conv)?.() ?? null }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ cpu: "cpu", gpu: null });
    expect(result.stderr).toContain('backends "cpu" and "gpu" are declared on one module, fwk/tables.js');
    expect(result.code).toBe(1);
    const doctor = await run(dir, [join(repoRoot, "dist/bundle/cli.js"), "doctor"]);
    expect(doctor.stdout).toContain('backends "cpu" and "gpu" are declared on one module');
    expect(doctor.code).toBe(1);
  });
});

describe("4d. a DISPATCH_HOOK_CONFIG file shaped like a package.json", () => {
  it("is read in full, with a warning, and strict passes when everything lands", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "main.mjs": landed,
      "wrapped.json": JSON.stringify({ dispatchHook: { expects: { numba: ["PoolLayer"] } } }),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { ...strict, DISPATCH_HOOK_CONFIG: "wrapped.json" });
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.stderr).toContain('the file holds a "dispatchHook" key');
    expect(result.code).toBe(0);
  });
});

describe("5. a registry that nothing else references", () => {
  it("is kept alive while it holds a pending registration: collected garbage cannot take it away", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "main.mjs": [
        'import { createRegistry } from "dispatch-hook";',
        'import * as ops from "ml-ops";',
        'function setup() { createRegistry().register("numba", ops.PoolLayer, () => "pooled"); }',
        "setup();",
        "for (let i = 0; i < 5; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 0)); }",
        landed,
      ].join("\n"),
    });
    const result = await run(dir, ["--expose-gc", "--import", loader, "main.mjs"], strict);
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.code).toBe(0);
  });
});

describe("6. a framework shipped as both CommonJS and ES modules", () => {
  const mode = hookMode(nodeVersion);
  it(`the require()d table ${mode === "register" ? "misses, and strict names it" : "gets the registration too"} (Node ${nodeVersion}, ${mode})`, async () => {
    const table =
      "class Table { constructor() { this.m = new Map(); } register(t, f) { this.m.set(t, f); } get(t) { return this.m.get(t); } unregister(t) { this.m.delete(t); } }";
    const dir = makeTree({
      ...plugin("tensorlab", false),
      "node_modules/dual/package.json": JSON.stringify({
        name: "dual",
        exports: { "./numba": { import: "./esm/numba.mjs", require: "./cjs/numba.cjs" } },
        // One backend, two module files: the ES one by pattern, the CommonJS one by name.
        dispatchHook: {
          backends: {
            "*": { module: "./esm/{backend}.mjs", export: "{backend}Funcify" },
            numba: { module: "./cjs/numba.cjs", export: "numbaFuncify" },
          },
        },
      }),
      "package.json": appJson({ type: "module", dependencies: { dual: "*", "dispatch-hook": "*" } }),
      "node_modules/dual/esm/numba.mjs": `${table}\nexport const numbaFuncify = new Table();\n`,
      "node_modules/dual/cjs/numba.cjs": `${table}\nexports.numbaFuncify = new Table();\n`,
      "main.mjs": [
        'import { createRequire } from "node:module";',
        'import { register } from "dispatch-hook";',
        'import { PoolLayer } from "ml-ops";',
        'register("numba", PoolLayer, () => "pooled");',
        'const esm = (await import("dual/numba")).numbaFuncify;',
        'const cjs = createRequire(import.meta.url)("dual/numba").numbaFuncify;',
        "console.log(JSON.stringify({ esm: esm.get(PoolLayer)?.() ?? null, cjs: cjs.get(PoolLayer)?.() ?? null }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    if (mode === "register") {
      expect(lastJson(result.stdout)).toEqual({ esm: "pooled", cjs: null });
      expect(result.stderr).toContain("cjs/numba.cjs was loaded with require()");
      expect(result.stderr).not.toContain("ok:");
      expect(result.code).toBe(1);
    } else {
      expect(lastJson(result.stdout)).toEqual({ esm: "pooled", cjs: "pooled" });
      expect(result.code).toBe(0);
    }
  });
});

describe("a require()d Dispatcher where the hooks cannot see require()", () => {
  // Node 20: the audit said both "[table] … no module the loader watches made it" (false: one is watched) and "[loader] …
  // was loaded with require()" (the cause).
  it.skipIf(hookMode(nodeVersion) !== "register")("one problem, the loader's, naming require()", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/fwkc/package.json": JSON.stringify({
        name: "fwkc",
        type: "commonjs",
        exports: { "./*": "./*" },
        dispatchHook: { backends: { "*": { module: "./backends/{backend}.js", export: "table" } } },
      }),
      "node_modules/fwkc/backends/cpu.js":
        'const { Dispatcher } = require("dispatch-hook");\nexports.table = new Dispatcher({ name: "cpu", backend: "cpu" });\n',
      "node_modules/fwkc/ops.js": "exports.Pool = class Pool {};\n",
      "node_modules/pc/package.json": JSON.stringify({
        name: "pc",
        type: "commonjs",
        dispatchHook: { registrations: { cpu: "./reg.js" } },
      }),
      "node_modules/pc/reg.js":
        'const { register } = require("dispatch-hook");\nregister("cpu", require("fwkc/ops.js").Pool, () => "pool");\n',
      "package.json": appJson({ type: "commonjs", dependencies: { fwkc: "*", pc: "*", "dispatch-hook": "*" } }),
      "main.cjs": [
        'const { table } = require("fwkc/backends/cpu.js");',
        'const { Pool } = require("fwkc/ops.js");',
        "console.log(JSON.stringify({ pool: table.get(Pool) ?? null }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.cjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ pool: null });
    expect(result.stderr).toContain("cpu.js was loaded with require()");
    expect(result.stderr).not.toContain("no module the loader watches made it");
    expect(result.code).toBe(1);
  });
});

describe("a miss says what dispatch-hook knows", () => {
  it("with no registration anywhere: whether a loader is installed, what it read, and which plugin declares the backend", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "node_modules/ml-ops/dispatch/numba.js": "// registers nothing\n",
      "main.mjs": landed,
    });
    const withLoader = await run(dir, ["--import", loader, "main.mjs"]);
    expect(lastJson(withLoader.stdout)).toEqual({ landed: "ERR_DISPATCH_NO_IMPL" });
    const script =
      'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js"); const { PoolLayer } = await import("ml-ops"); try { numbaFuncify.resolve(new PoolLayer()); } catch (e) { console.log(e.message); }';
    const explained = await run(dir, ["--import", loader, "--input-type=module", "-e", script]);
    expect(explained.stdout).toContain("The dispatch-hook loader is installed");
    expect(explained.stdout).toContain("plugins with a registration module for numba: ml-ops");
    const without = await run(dir, ["--input-type=module", "-e", script]);
    expect(without.stdout).toContain("No dispatch-hook loader is installed in this thread");
  });

  it("when two copies of the op's class explain the miss, it says so", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/ml-ops/copy.js": "export class PoolLayer {}\n",
      "main.mjs": [
        'import { register } from "dispatch-hook";',
        'import { PoolLayer } from "ml-ops";',
        'import { PoolLayer as Twin } from "ml-ops/copy.js";',
        'register("numba", PoolLayer, () => "pooled");',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        "try { numbaFuncify.resolve(new Twin()); } catch (e) { console.log(JSON.stringify({ message: e.message })); }",
        'const { registry } = await import("dispatch-hook");',
        "console.log(JSON.stringify({ problems: registry.verify().problems.map((p) => p.kind) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    const [first] = result.stdout.trim().split("\n");
    expect(JSON.parse(first as string).message).toContain("second copy of that class");
    expect(lastJson(result.stdout)).toEqual({ problems: ["identity"] });
    expect(result.code).toBe(1);
  });

  it("a table with a fallback that serves the second copy quietly: the same problem, and strict fails (it passed before)", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/tensorlab/link/numba/dispatch/basic.js": [
        'import { Dispatcher } from "dispatch-hook";',
        'export const numbaFuncify = new Dispatcher({ name: "numbaFuncify", backend: "numba", fallback: () => "generic" });',
        "",
      ].join("\n"),
      "node_modules/ml-ops/copy.js": "export class PoolLayer {}\n",
      "main.mjs": [
        'import { register } from "dispatch-hook";',
        'import { PoolLayer } from "ml-ops";',
        'import { PoolLayer as Twin } from "ml-ops/copy.js";',
        'register("numba", PoolLayer, () => "pooled");',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { registry } = await import("dispatch-hook");',
        "console.log(JSON.stringify({ ran: numbaFuncify.resolve(new Twin())(), again: numbaFuncify.resolve(new Twin())(), problems: registry.verify().problems.map((p) => p.kind) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ ran: "generic", again: "generic", problems: ["identity"] });
    expect(result.stderr).toContain("[identity]");
    expect(result.code).toBe(1);
  });
});

describe("6b. a table the loader does not watch", () => {
  it("made by a module the declaration does not match, and used, while a plugin declares a registration module for its backend: strict fails naming both (it passed)", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/ml-ops/package.json": JSON.stringify({
        name: "ml-ops",
        type: "module",
        exports: { ".": "./index.js", "./*": "./*" },
        dispatchHook: { registrations: { numba: "./dispatch/numba.js", gpu: "./dispatch/gpu.js" } },
      }),
      "node_modules/ml-ops/dispatch/gpu.js":
        'import { register } from "dispatch-hook";\nimport { PoolLayer } from "../index.js";\nregister("gpu", PoolLayer, () => "pooled on gpu");\n',
      // The framework makes its gpu table where its {backend} pattern does not reach.
      "node_modules/tensorlab/link/gpu-impl.js":
        'import { Dispatcher } from "dispatch-hook";\nexport const gpuTable = new Dispatcher({ name: "gpuTable", backend: "gpu", fallback: () => "generic" });\n',
      "package.json": appJson({ type: "module", dependencies: { tensorlab: "*", "ml-ops": "*", "dispatch-hook": "*" } }),
      "main.mjs": [
        'const { PoolLayer } = await import("ml-ops");',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { gpuTable } = await import("tensorlab/link/gpu-impl.js");',
        "console.log(JSON.stringify({ numba: numbaFuncify.resolve(new PoolLayer())(), gpu: gpuTable.resolve(new PoolLayer())() }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ numba: "pooled", gpu: "generic" });
    expect(result.stderr).toMatch(/gpuTable.*never reached dispatch-hook/s);
    expect(result.stderr).toContain("ml-ops");
    expect(result.stderr).not.toMatch(/^ok:/m);
    expect(result.code).toBe(1);
  });
});

describe("7. no loader at all", () => {
  // No --import, no adapter: nothing in the thread could have made a declared backend's table
  // signal. Before, assertComplete() and the strict exit audit passed, and verify() said ok with
  // nothing checked.
  const noLoader = { ...frameworkEsm, ...plugin("tensorlab", true) };

  it("assertComplete({ backends }) throws ERR_DISPATCH_NO_LOADER naming the loader and how to add it; verify() is not ok", async () => {
    const dir = makeTree({
      ...noLoader,
      "main.mjs": [
        'import { register, registry } from "dispatch-hook";',
        'import { PoolLayer } from "ml-ops";',
        "const attempt = () => {",
        '  try { registry.assertComplete({ backends: ["numba"] }); return { code: "passed" }; }',
        "  catch (e) { return { code: e.code, name: e.name, message: e.message }; }",
        "};",
        "// Nothing registered yet: nothing could be checked.",
        "const nothing = attempt();",
        'const { ok, checked } = registry.verify({ backends: ["numba"] });',
        'register("numba", PoolLayer, () => "pooled");',
        "const pending = attempt();",
        'const kinds = registry.verify({ backends: ["numba"] }).problems.map((p) => p.kind);',
        "console.log(JSON.stringify({ nothing, ok, checked, pending, kinds }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"]);
    type Attempt = { code: string; name: string; message: string };
    const out = lastJson(result.stdout) as { nothing: Attempt; ok: boolean; checked: number; pending: Attempt; kinds: string[] };
    for (const attempt of [out.nothing, out.pending]) {
      expect(attempt.code).toBe("ERR_DISPATCH_NO_LOADER");
      expect(attempt.name).toBe("DispatchHookError [ERR_DISPATCH_NO_LOADER]");
      expect(attempt.message).toContain("no dispatch-hook loader");
      expect(attempt.message).toContain("node --import dispatch-hook/loader.mjs");
      expect(attempt.message).toContain("dispatch-hook/vitest");
      expect(attempt.message).toContain("announce(");
      // Said of what dispatch-hook saw, not of what exists: a framework's table may exist and never have reached it.
      expect(attempt.message).toContain("no numba table reached dispatch-hook");
    }
    expect(out.ok).toBe(false);
    // The registration it leaves pending is listed too.
    expect(out.pending.message).toContain("PoolLayer on numba");
    expect(out.kinds).toEqual(["pending", "no-loader"]);
  });

  it("strict fails the process, printing the table, for expectations declared to the registry", async () => {
    const dir = makeTree({
      ...noLoader,
      "main.mjs": 'import { registry } from "dispatch-hook";\nregistry.expect("numba", ["PoolLayer"]);\nconsole.log("ran");\n',
    });
    const result = await run(dir, ["main.mjs"], strict);
    expect(result.stdout).toContain("ran");
    expect(result.stderr).toContain("dispatch-hook audit (strict)");
    expect(result.stderr).toContain("[no-loader] numba");
    expect(result.stderr).toContain("node --import dispatch-hook/loader.mjs");
    expect(result.stderr).not.toContain("ok:");
    expect(result.code).toBe(1);
  });

  it("strict fails the process for a backend named to assertComplete(), even when the program caught the error", async () => {
    const dir = makeTree({
      ...noLoader,
      "main.mjs": [
        'import { registry } from "dispatch-hook";',
        'try { registry.assertComplete({ backends: ["numba"] }); } catch (e) { console.log(JSON.stringify({ caught: e.code })); }',
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ caught: "ERR_DISPATCH_NO_LOADER" });
    expect(result.stderr).toContain("[no-loader] numba");
    expect(result.code).toBe(1);
  });

  it("the native route needs no loader: tables the framework provides itself are checked, and strict passes", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/nativekit/package.json": JSON.stringify({ name: "nativekit", type: "module", exports: { "./*": "./*" } }),
      "node_modules/nativekit/cpu.js": [
        'import { announce, Dispatcher } from "dispatch-hook";',
        'export const cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });',
        'announce("cpu", cpuTable, { module: import.meta.url });',
        "",
      ].join("\n"),
      "package.json": appJson({ type: "module", dependencies: { nativekit: "*", "dispatch-hook": "*" } }),
      "main.mjs": [
        'import { register, registry } from "dispatch-hook";',
        "class Conv {}",
        'register("cpu", Conv, () => "conv on cpu");',
        'registry.expect("cpu", ["Conv"]);',
        'const { cpuTable } = await import("nativekit/cpu.js");',
        'registry.assertComplete({ backends: ["cpu"] });',
        'const report = registry.verify({ backends: ["cpu"] });',
        "console.log(JSON.stringify({ answer: cpuTable.resolve(new Conv())(), ok: report.ok, checked: report.checked }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ answer: "conv on cpu", ok: true, checked: 2 });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("a Map table of a backend the framework's package.json declares, loaded and missed: strict fails, naming the missing loader and the declaration (it passed, saying the backend never loaded)", async () => {
    const dir = makeTree({
      ...noLoader,
      "node_modules/tensorlab/link/gpu/dispatch/basic.js": "export const gpuFuncify = new Map();\n",
      "main.mjs": [
        'import { register } from "dispatch-hook";',
        'import { PoolLayer } from "ml-ops";',
        'const { gpuFuncify } = await import("tensorlab/link/gpu/dispatch/basic.js");',
        'register("gpu", PoolLayer, () => "pooled");',
        "console.log(JSON.stringify({ landed: gpuFuncify.has(PoolLayer) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: false });
    expect(result.stderr).toContain("[no-loader]");
    expect(result.stderr).toContain("registrations wait for gpu, which the project declares (tensorlab: ./link/gpu/dispatch/basic.js)");
    expect(result.stderr).toContain("--import dispatch-hook/loader.mjs");
    expect(result.code).toBe(1);
  });

  it("a backend name with %, # or ? in it: the exit audit reads the declarations without a crash (it threw URIError from its exit handler)", async () => {
    const dir = makeTree({
      ...noLoader,
      "main.mjs":
        'import { register } from "dispatch-hook";\nimport { PoolLayer } from "ml-ops";\nfor (const b of ["gpu%", "gpu#1", "gpu?x"]) register(b, PoolLayer, () => 1);\n',
    });
    const result = await run(dir, ["main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(result.stderr).not.toContain("URIError");
    expect(result.stderr).toContain("nothing was checked");
    expect(result.code).toBe(0);
  });

  it("a program that declares nothing still passes strict: a registration for a backend that no package declares and that never loaded is not a failure", async () => {
    const dir = makeTree({
      ...noLoader,
      "main.mjs": 'import { register } from "dispatch-hook";\nimport { PoolLayer } from "ml-ops";\nregister("tpu", PoolLayer, () => 1);\n',
    });
    const report = await run(dir, ["main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(report.stderr).toContain("no dispatch-hook loader is installed in this thread");
    expect(report.stderr).toContain("nothing was checked");
    const result = await run(dir, ["main.mjs"], strict);
    expect(result.code).toBe(0);
  });
});

describe("8. a backend's Dispatcher that never reached dispatch-hook", () => {
  // The framework's numba module creates its Dispatcher with backend "numba", and a plugin registers
  // for numba at once; nothing announced the table. Before, strict passed ("numba, which never loaded").
  const registering = [
    'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
    'const { register } = await import("dispatch-hook");',
    'const { PoolLayer, poolNumba } = await import("ml-ops");',
    'register("numba", PoolLayer, poolNumba);',
    "console.log(JSON.stringify({ entries: [...numbaFuncify.entries].length }));",
  ].join("\n");

  it("with no loader: strict fails, saying the table exists but never reached dispatch-hook, and how to fix it", async () => {
    const dir = makeTree({ ...frameworkEsm, ...plugin("tensorlab", true), "main.mjs": registering });
    const result = await run(dir, ["main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ entries: 0 });
    expect(result.stderr).toContain("[pending] PoolLayer on numba");
    expect(result.stderr).toContain('a numba table exists in this thread (Dispatcher "numbaFuncify"), but it never reached dispatch-hook');
    expect(result.stderr).toContain("--import dispatch-hook/loader.mjs");
    expect(result.code).toBe(1);
  });

  it("with no loader: strict fails though the program never touched the table, since a registration waits for its backend (it passed, saying numba never loaded)", async () => {
    const untouched = registering.replace("[...numbaFuncify.entries].length", "typeof numbaFuncify");
    const dir = makeTree({ ...frameworkEsm, ...plugin("tensorlab", true), "main.mjs": untouched });
    const result = await run(dir, ["main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ entries: "object" });
    expect(result.stderr).toContain(
      "no dispatch-hook loader is installed in this process, and tables of numba were made, with registrations waiting for them",
    );
    expect(result.stderr).toContain("backends: numba made, never reached dispatch-hook");
    expect(result.stderr).not.toContain("never loaded");
    expect(result.code).toBe(1);
    // A backend set's own tables are no framework table reaching dispatch-hook: they hid it.
    const withSet = [
      'const { createBackends, dispatchable } = await import("dispatch-hook");',
      'const set = createBackends({ name: "mylib", discover: false });',
      'set.declare({ name: "fast", primaryTypes: [Float32Array], implementations: { pool: () => "fast pool" } });',
      'dispatchable((x) => "reference", { name: "pool", args: ["x"], backends: set })(new Float32Array(1));',
      untouched,
    ].join("\n");
    const beside = await run(makeTree({ ...frameworkEsm, ...plugin("tensorlab", true), "main.mjs": withSet }), ["main.mjs"], strict);
    expect(beside.stderr).toContain("tables of numba were made, with registrations waiting for them");
    expect(beside.code).toBe(1);
  });

  it("with no loader, where the framework announces its tables itself: a registration waiting for a backend the app never initialised passes strict", async () => {
    // The framework makes both Dispatchers up front and announces one when the app initialises it;
    // the plugin registers for both. No loader is needed, and nothing missed.
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "framework.mjs": [
        'import { Dispatcher, announce } from "dispatch-hook";',
        'export const tables = { cpu: new Dispatcher({ name: "cpu", backend: "cpu" }), gpu: new Dispatcher({ name: "gpu", backend: "gpu" }) };',
        "export function init(backend) { announce(backend, tables[backend], { module: import.meta.url }); return tables[backend]; }",
      ].join("\n"),
      "main.mjs": [
        'import { register } from "dispatch-hook";',
        'import { init } from "./framework.mjs";',
        "class Conv {}",
        'register("cpu", Conv, () => "conv on cpu");',
        'register("gpu", Conv, () => "conv on gpu");',
        'console.log(JSON.stringify({ answer: init("cpu").resolve(new Conv())() }));',
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ answer: "conv on cpu" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("with no loader and a plugin that declares its registration module: strict fails when the program used the table, though nothing was registered", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "main.mjs": [
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("ml-ops");',
        "let answer = 'missed';",
        "try { answer = numbaFuncify.resolve(new PoolLayer())(); } catch {}",
        "console.log(JSON.stringify({ answer }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ answer: "missed" });
    expect(result.stderr).toContain("no dispatch-hook loader is installed in this process, and tables of numba were used");
    expect(result.code).toBe(1);
    // A registration checked elsewhere (a table the program announces itself) does not hide it.
    const mixed = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "main.mjs": [
        'import { announce, register } from "dispatch-hook";',
        "class Own {}",
        "const own = new Map();",
        'announce("own", own);',
        'register("own", Own, () => "own");',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("ml-ops");',
        "try { numbaFuncify.resolve(new PoolLayer()); } catch {}",
        "console.log(JSON.stringify({ own: own.get(Own)?.() }));",
      ].join("\n"),
    });
    const hidden = await run(mixed, ["main.mjs"], strict);
    expect(lastJson(hidden.stdout)).toEqual({ own: "own" });
    expect(hidden.stderr).toContain("tables of numba were used");
    expect(hidden.code).toBe(1);
    // With the loader, the plugin's registration module runs, and strict passes.
    const served = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(served.stdout)).toEqual({ answer: "pooled" });
    expect(served.code).toBe(0);
  });

  it("with a loader that watches another module (a wrong path in the framework's declaration): strict fails, pointing at doctor", async () => {
    const tree: Tree = { ...frameworkEsm, ...plugin("tensorlab", true), "main.mjs": registering };
    const json = JSON.parse(tree["node_modules/tensorlab/package.json"] as string);
    json.dispatchHook.backends["*"].module = "./link/{backend}/dispatch/elsewhere.js";
    tree["node_modules/tensorlab/package.json"] = JSON.stringify(json);
    const dir = makeTree(tree);
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ entries: 0 });
    expect(result.stderr).toContain('a numba table exists in this thread (Dispatcher "numbaFuncify"), but it never reached dispatch-hook');
    expect(result.stderr).toContain("npx dispatch-hook doctor");
    expect(result.code).toBe(1);
  });

  // The declared module exports two Dispatchers of numba: the declared export (a legacy alias), where the plugin's
  // registrations land, and the one the framework dispatches through. Strict passed: another numba table had loaded.
  it("a second Dispatcher of a backend whose declared table loaded, used and never reached dispatch-hook: strict fails naming both", async () => {
    const tree: Tree = { ...frameworkEsm, ...plugin("tensorlab", true) };
    tree["node_modules/tensorlab/link/numba/dispatch/basic.js"] = [
      'import { Dispatcher } from "dispatch-hook";',
      'export const numbaFuncify = new Dispatcher({ name: "numbaFuncify", backend: "numba" });',
      'export const numbaFast = new Dispatcher({ name: "numbaFast", backend: "numba" });',
    ].join("\n");
    const dir = makeTree({
      ...tree,
      "main.mjs": [
        'const { numbaFast } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("ml-ops");',
        // A lookup that misses quietly (resolve() would have thrown, and its miss says which table the registration reached).
        "console.log(JSON.stringify({ landed: numbaFast.get(PoolLayer) ?? null }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: null });
    expect(result.stderr).toContain('[table] the numba table (Dispatcher "numbaFast") was made and used, but never reached dispatch-hook');
    expect(result.stderr).toContain("another numba table did");
    expect(result.code).toBe(1);
    // A copy the framework makes of the declared table once the registrations landed holds them: no problem.
    const copied = await run(
      makeTree({
        ...tree,
        "main.mjs": [
          'const { numbaFuncify, numbaFast } = await import("tensorlab/link/numba/dispatch/basic.js");',
          'const { PoolLayer } = await import("ml-ops");',
          "for (const [type, impl] of numbaFuncify.entries) numbaFast.register(type, impl);",
          "console.log(JSON.stringify({ landed: numbaFast.get(PoolLayer)?.() ?? null }));",
        ].join("\n"),
      }),
      ["--import", loader, "main.mjs"],
      strict,
    );
    expect(lastJson(copied.stdout)).toEqual({ landed: "pooled" });
    expect(copied.stderr).toBe("");
    expect(copied.code).toBe(0);
    // A framework's own Dispatcher of the backend elsewhere (gradient rules), used, never meant for plugins: no problem
    // (a review of the first version found it failed).
    const internal = await run(
      makeTree({
        ...tree,
        "main.mjs": [
          'import { Dispatcher } from "dispatch-hook";',
          'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
          'const { PoolLayer } = await import("ml-ops");',
          'const gradRules = new Dispatcher({ name: "numba grad rules", backend: "numba" });',
          "console.log(JSON.stringify({ landed: numbaFuncify.resolve(new PoolLayer())(), grad: gradRules.get(PoolLayer) ?? null }));",
        ].join("\n"),
      }),
      ["--import", loader, "main.mjs"],
      strict,
    );
    expect(lastJson(internal.stdout)).toEqual({ landed: "pooled", grad: null });
    expect(internal.stderr).toBe("");
    expect(internal.code).toBe(0);
  });

  it("made and never used, it says nothing: a framework's tables made up front for backends the app never loads pass strict", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "main.mjs": [
        'import { Dispatcher, register } from "dispatch-hook";',
        'const { PoolLayer, poolNumba } = await import("ml-ops");',
        // Every backend's table made at once; the app loads numba only; the plugin registers for gpu too.
        'export const tables = { gpu: new Dispatcher({ name: "gpuFuncify", backend: "gpu" }) };',
        'register("gpu", PoolLayer, poolNumba);',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        "console.log(JSON.stringify({ landed: numbaFuncify.resolve(new PoolLayer())() }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("a table of another namespace is not the framework's: a framework registration waiting for that backend stays no problem", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "main.mjs": [
        'import { announce, register } from "dispatch-hook";',
        'const { PoolLayer, poolNumba } = await import("ml-ops");',
        'register("tpu", PoolLayer, poolNumba);',
        'announce("tpu", new Map(), { namespace: "profiler" });',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        "console.log(JSON.stringify({ landed: numbaFuncify.resolve(new PoolLayer())() }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], strict);
    expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    expect(result.stderr).not.toContain("[pending]");
    expect(result.code).toBe(0);
  });
});
