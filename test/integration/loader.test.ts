/** The loader under real node processes: failures, config problems, copies, instances, stacks. */
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { lastJson, loader, makeTree, nodeVersion, repoRoot, run } from "./fixture.js";
import { frameworkEsm, plugin, typelessEsmFramework } from "./trees.js";

const report = [
  'const { registry } = await import("dispatch-hook");',
  "const r = registry.verify();",
  "console.log(JSON.stringify({ states: r.registrations.map((x) => x.state), problems: r.problems.map((p) => p.kind + ': ' + p.message) }));",
].join("\n");

describe("the loader", () => {
  it("loads no Node builtin beyond those a do-nothing hook loads (start-up cost)", async () => {
    const dir = makeTree({ "main.mjs": "console.log(JSON.stringify(process.moduleLoadList));\n" });
    const loaded = async (hook: string) => {
      const result = await run(dir, ["--import", hook, "main.mjs"]);
      expect(result.stderr).toBe("");
      return JSON.parse(result.stdout) as string[];
    };
    const floor = new Set(await loaded(join(repoRoot, "bench/passthrough.mjs")));
    const extra = (await loaded(loader)).filter((m) => !floor.has(m));
    // import.meta in our own modules; node:crypto, node:os, node:vm and the like would show here.
    const expected = new Set(["NativeModule internal/modules/esm/initialize_import_meta"]);
    expect(extra.filter((m) => !expected.has(m))).toEqual([]);
  });

  it("a dispatch module that throws: the app sees the original error, registrations stay pending, the audit says why", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/tensorlab/link/numba/dispatch/basic.js":
        'throw new RangeError("numba is not installed");\nexport const numbaFuncify = 1;\n',
      "main.mjs": [
        'import "ml-ops/register-now.js";',
        "let error;",
        'try { await import("tensorlab/link/numba/dispatch/basic.js"); } catch (e) { error = e; }',
        "console.log(JSON.stringify({ name: error.name, message: error.message }));",
        report,
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    const lines = result.stdout.trim().split("\n");
    expect(JSON.parse(lines[0] as string)).toEqual({ name: "RangeError", message: "numba is not installed" });
    const out = lastJson(result.stdout);
    expect(out.states).toEqual(["pending"]);
    expect(JSON.stringify(out.problems)).toContain("was loaded but never finished evaluating");
    expect(result.code).toBe(0);
  });

  it("a malformed dispatchHook field and a malformed package.json: a warning names the file and key, the app runs", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorlab: "*", typo: "*", broken: "*", "dispatch-hook": "*" },
      }),
      "node_modules/typo/package.json": JSON.stringify({ name: "typo", dispatchHook: { registation: {} } }),
      "node_modules/broken/package.json": "{ nope",
      "main.mjs": [
        'import "ml-ops/register-now.js";',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("ml-ops");',
        'console.log(JSON.stringify({ landed: numbaFuncify.resolve(new PoolLayer())() === "pooled" }));',
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.code).toBe(0);
    expect(lastJson(result.stdout)).toEqual({ landed: true });
    expect(result.stderr).toContain("[ERR_DISPATCH_CONFIG_INVALID]");
    expect(result.stderr).toContain('Invalid option in package.json "dispatchHook" of typo: "registation" (did you mean "registrations"?)');
    expect(result.stderr).toContain(join(dir, "node_modules/typo/package.json"));
    expect(result.stderr).toContain("[ERR_DISPATCH_CONFIG_JSON]");
    expect(result.stderr).toContain(join(dir, "node_modules/broken/package.json"));
  });

  it("warns about a broken package.json even when the app is a CommonJS script that ends at once (no audit asked for)", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "app", dependencies: { broken: "*", "dispatch-hook": "*" } }),
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/broken/package.json": "{ nope",
      "main.cjs": 'console.log("{}");\n',
    });
    const result = await run(dir, ["--import", loader, "main.cjs"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("[ERR_DISPATCH_CONFIG_JSON]");
    expect(result.stderr).toContain(join(dir, "node_modules/broken/package.json"));
  });

  it("two module instances of one dispatch module (a query string) each get every registration", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "main.mjs": [
        'const a = (await import("tensorlab/link/numba/dispatch/basic.js")).numbaFuncify;',
        'const url = import.meta.resolve("tensorlab/link/numba/dispatch/basic.js");',
        'const b = (await import(url + "?copy=2")).numbaFuncify;',
        'const { PoolLayer } = await import("ml-ops");',
        "console.log(JSON.stringify({ distinct: a !== b, a: a.resolve(new PoolLayer())(), b: b.resolve(new PoolLayer())() }));",
        'const { registry } = await import("dispatch-hook");',
        "console.log(JSON.stringify({ modules: registry.verify().registrations[0].tables.map((t) => t.module.split('/').pop()) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.stderr).toBe("");
    const [first] = result.stdout.trim().split("\n");
    expect(JSON.parse(first as string)).toEqual({ distinct: true, a: "pooled", b: "pooled" });
    expect(lastJson(result.stdout)).toEqual({ modules: ["basic.js", "basic.js?copy=2"] });
  });

  it("many instances (?v=N): each gets every registration, and those after the plugins ran need no windows", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "main.mjs": [
        'const url = import.meta.resolve("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("ml-ops");',
        "const got = [];",
        "for (let i = 1; i <= 20; i++) got.push((await import(url + '?v=' + i)).numbaFuncify.resolve(new PoolLayer())());",
        'const { registry } = await import("dispatch-hook");',
        'const { hookMode } = await import("dispatch-hook/hooks");',
        "const r = registry.verify();",
        "console.log(JSON.stringify({ got: [...new Set(got)], tables: r.registrations[0].tables.length, windows: r.plugins.length, mode: hookMode(), ok: r.ok }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.stderr).toBe("");
    const out = lastJson(result.stdout) as { got: string[]; tables: number; windows: number; mode: string; ok: boolean };
    expect(out).toMatchObject({ got: ["pooled"], tables: 20, ok: true });
    // The installation tells its hooks (on their own thread too) that the plugin's module has
    // finished: later instances are served as themselves, with no windows.
    expect(out.windows).toBe(1);
    expect(["registerHooks", "register"]).toContain(out.mode);
  });

  it("a registration module that threw is run into again by every later instance, and each importer sees the error", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "node_modules/ml-ops/dispatch/numba.js": 'throw new TypeError("plugin broke");\n',
      "main.mjs": [
        'const url = import.meta.resolve("tensorlab/link/numba/dispatch/basic.js");',
        "const errors = [];",
        "for (let i = 1; i <= 3; i++) { try { await import(url + '?v=' + i); errors.push('none'); } catch (e) { errors.push(e.message); } }",
        'const { registry } = await import("dispatch-hook");',
        "const r = registry.verify();",
        "console.log(JSON.stringify({ errors, states: r.plugins.map((p) => p.state), ok: r.ok }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    const out = lastJson(result.stdout) as { errors: string[]; states: string[]; ok: boolean };
    expect(out.errors).toEqual(["plugin broke", "plugin broke", "plugin broke"]);
    expect(out.states).toEqual(["failed", "failed", "failed"]);
    expect(out.ok).toBe(false);
  });

  it("a watched module whose export is no table: a warning with a code, the app runs, the registration waits, the audit names it", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "node_modules/tensorlab/link/numba/dispatch/basic.js": "export const numbaFuncify = 42;\n",
      "main.mjs": [
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'await import("tensorlab/link/numba/dispatch/basic.js?again");',
        'const { registry } = await import("dispatch-hook");',
        "const r = registry.verify();",
        "console.log(JSON.stringify({ numbaFuncify, states: r.registrations.map((x) => x.state), problems: r.problems.map((p) => p.kind) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.code).toBe(0);
    expect(lastJson(result.stdout)).toEqual({ numbaFuncify: 42, states: ["pending"], problems: ["table", "table"] });
    // One warning per module instance, with its code, naming the export and what would fix it.
    const warnings = result.stderr.split("\n").filter((line) => line.includes("DISPATCH_HOOK_TABLE_REJECTED"));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('its export "numbaFuncify" could not be used');
    expect(warnings[0]).toContain("registry.declare(");
  });

  it("two copies of dispatch-hook in one process both see the signal", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "main.mjs": [
        'import { register as registerA, registry as registryA } from "dispatch-hook";',
        'import { register as registerB, registry as registryB } from "other-plugin";',
        'import { PoolLayer } from "ml-ops";',
        "class Im2Col {}",
        'registerA("numba", PoolLayer, () => "a");',
        'registerB("numba", Im2Col, () => "b");',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        "console.log(JSON.stringify({ copies: registryA !== registryB, a: numbaFuncify.resolve(new PoolLayer())(), b: numbaFuncify.resolve(new Im2Col())() }));",
      ].join("\n"),
      "node_modules/other-plugin/package.json": JSON.stringify({ name: "other-plugin", type: "module", exports: "./index.js" }),
      "node_modules/other-plugin/index.js": 'export * from "dispatch-hook";\n',
    });
    // A real second copy (not a symlink: that would resolve to the same files).
    const copy = join(dir, "node_modules/other-plugin/node_modules/dispatch-hook");
    mkdirSync(copy, { recursive: true });
    cpSync(join(repoRoot, "dist"), join(copy, "dist"), { recursive: true });
    cpSync(join(repoRoot, "package.json"), join(copy, "package.json"));
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ copies: true, a: "a", b: "b" });
  });

  it("leaves JSON and builtins untouched even when a pattern would match them", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dispatchHook: { backends: { "*": { module: "./data/{backend}.json", export: "default" } } },
      }),
      "data/numba.json": '{ "table": true }\n',
      "main.mjs": [
        'import data from "./data/numba.json" with { type: "json" };',
        'import { sep } from "node:path";',
        "console.log(JSON.stringify({ data, sep }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.stderr).not.toContain("DISPATCH_HOOK");
    expect(lastJson(result.stdout)).toEqual({ data: { table: true }, sep: "/" });
  });

  it("keeps stack traces identical under --enable-source-maps", async () => {
    const files = {
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      // Generated code with a source map back to an original file, as a bundler or tsc would emit.
      "node_modules/tensorlab/link/jax/dispatch/basic.js": [
        'import { Dispatcher } from "dispatch-hook";',
        'export const jaxFuncify = new Dispatcher({ backend: "jax" });',
        "export function boom() {",
        '  throw new Error("boom");',
        "}",
        "//# sourceMappingURL=basic.js.map",
        "",
      ].join("\n"),
      "node_modules/tensorlab/link/jax/dispatch/basic.js.map": JSON.stringify({
        version: 3,
        sources: ["basic.ts"],
        names: [],
        // Line 4 (0-based 3), column 2 of the output maps to line 11, column 4 of basic.ts.
        mappings: ";;;EAUI",
      }),
      "main.mjs": [
        'const { boom } = await import("tensorlab/link/jax/dispatch/basic.js");',
        "try { boom(); } catch (e) { console.log(JSON.stringify({ frame: e.stack.split('\\n')[1].trim() })); }",
      ].join("\n"),
    };
    const dir = makeTree(files);
    const plain = await run(dir, ["--enable-source-maps", "main.mjs"]);
    const hooked = await run(dir, ["--enable-source-maps", "--import", loader, "main.mjs"]);
    const frame = lastJson(plain.stdout).frame as string;
    expect(frame).toMatch(/basic\.ts:11:5\)$/);
    expect(lastJson(hooked.stdout).frame).toBe(frame);
    const noMaps = await run(dir, ["main.mjs"]);
    const noMapsHooked = await run(dir, ["--import", loader, "main.mjs"]);
    expect(lastJson(noMapsHooked.stdout).frame).toBe(lastJson(noMaps.stdout).frame);
    expect(lastJson(noMaps.stdout).frame).toMatch(/basic\.js:4:9\)$/);
  });

  it("composes with import-in-the-middle, registered before or after it: the app runs and the registration lands", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "node_modules/import-in-the-middle": { symlink: join(repoRoot, "node_modules/import-in-the-middle") },
      "iitm.mjs": 'import { register } from "node:module";\nregister("import-in-the-middle/hook.mjs", import.meta.url);\n',
      "main.mjs": [
        'import { Hook } from "import-in-the-middle";',
        'new Hook(["tensorlab/link/numba/dispatch/basic.js"], () => {});',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        'const { PoolLayer } = await import("ml-ops");',
        "console.log(JSON.stringify({ landed: numbaFuncify.resolve(new PoolLayer())() }));",
      ].join("\n"),
    });
    // It rewrites every query it wraps (through URLSearchParams) and adds its own parameter after ours.
    for (const order of [
      ["./iitm.mjs", loader],
      [loader, "./iitm.mjs"],
    ]) {
      const result = await run(dir, ["--no-warnings", ...order.flatMap((hook) => ["--import", hook]), "main.mjs"]);
      expect(result.stderr).toBe("");
      expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
    }
  });

  it("strict mode fails the process when a registration failed, and prints the audit table", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/tensorlab/link/numba/dispatch/basic.js":
        'export const numbaFuncify = { register() { throw new Error("frozen table"); } };\n',
      "main.mjs": [
        'import "ml-ops/register-now.js";',
        'await import("tensorlab/link/numba/dispatch/basic.js");',
        'console.log("done");',
      ].join("\n"),
    });
    const strict = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(strict.stdout.trim()).toBe("done");
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain("dispatch-hook audit (strict)");
    expect(strict.stderr).toContain("[failed] PoolLayer on numba");
    expect(strict.stderr).toContain("frozen table");
    const silent = await run(dir, ["--import", loader, "main.mjs"]);
    expect(silent.code).toBe(0);
    expect(silent.stderr).toBe("");
  });
});

describe(`require() of an ES module in a package with no "type" (Node ${nodeVersion}, ${hookMode(nodeVersion)})`, () => {
  // Node 22+ reads such a file's syntax; the loader served it as CommonJS, and require() threw
  // "Cannot use import statement outside a module" where it worked without the loader.
  it.skipIf(hookMode(nodeVersion) !== "registerHooks")(
    "is served as the ES module it is: require() works, and the plugin lands",
    async () => {
      const dir = makeTree({
        ...typelessEsmFramework,
        "main.cjs": [
          'const { table } = require("esk/backends/cpu.js");',
          'const { Pool } = require("esk-ops/cpu.js");',
          "console.log(JSON.stringify({ got: table.resolve(new Pool())() }));",
        ].join("\n"),
      });
      const result = await run(dir, ["--import", loader, "main.cjs"], { DISPATCH_HOOK_AUDIT: "strict" });
      expect(result.stderr).not.toContain("Cannot use import statement");
      expect(lastJson(result.stdout)).toEqual({ got: "pool" });
      expect(result.code).toBe(0);
    },
  );
});
