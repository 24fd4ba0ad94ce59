/** Faults around the loader, in real processes. Each ends with the audit accounting for everything. */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { lastJson, loader, makeTree, nodeVersion, run, type Tree } from "./fixture.js";
import { frameworkCjs, frameworkEsm, plugin } from "./trees.js";

const audit = [
  'const { registry } = await import("dispatch-hook");',
  "const r = registry.verify();",
  "console.log(JSON.stringify({ states: r.registrations.map((x) => x.op + ':' + x.state), problems: r.problems.map((p) => p.kind + ': ' + p.message) }));",
].join("\n");

/** A plugin whose numba registration module is given, and a healthy jax one. */
function brokenPlugin(numbaModule: string) {
  const tree = { ...frameworkEsm, ...plugin("tensorlab", true) };
  tree["node_modules/ml-ops/package.json"] = JSON.stringify({
    name: "ml-ops",
    type: "module",
    exports: { ".": "./index.js", "./*": "./*" },
    dispatchHook: {
      registrations: { numba: "./dispatch/numba.js", jax: "./dispatch/jax.js" },
      expects: { numba: ["PoolLayer", "Im2Col"], jax: ["PoolLayer"] },
    },
  });
  tree["node_modules/ml-ops/dispatch/numba.js"] = numbaModule;
  tree["node_modules/ml-ops/dispatch/jax.js"] =
    'import { register } from "dispatch-hook";\nimport { PoolLayer } from "../index.js";\nregister("jax", PoolLayer, () => "jax");\n';
  tree["main.mjs"] = [
    "let error;",
    'try { await import("tensorlab/link/numba/dispatch/basic.js"); } catch (e) { error = e.code ?? e.message; }',
    'const { jaxFuncify } = await import("tensorlab/link/jax/dispatch/basic.js");',
    'const { PoolLayer } = await import("ml-ops");',
    "console.log(JSON.stringify({ error, jax: jaxFuncify.resolve(new PoolLayer())() }));",
    audit,
  ].join("\n");
  return tree;
}

/** A CommonJS framework, ml-ops with `registration` as its numba registration module (and `files`), and `main.cjs`. */
function requiringApp(registration: string, files: Tree, main: readonly string[]): Tree {
  return {
    ...frameworkCjs,
    ...plugin("tensorlab-cjs", false),
    "node_modules/ml-ops/package.json": JSON.stringify({ name: "ml-ops", dispatchHook: { registrations: { numba: registration } } }),
    ...files,
    "package.json": JSON.stringify({ name: "app", dependencies: { "tensorlab-cjs": "*", "ml-ops": "*", "dispatch-hook": "*" } }),
    "main.cjs": main.join("\n"),
  };
}

describe("faults around the loader", () => {
  it("a registration module throws: the app sees the error, other backends are unaffected, the audit names what happened", async () => {
    const dir = makeTree(
      brokenPlugin(
        'import { register } from "dispatch-hook";\nimport { PoolLayer } from "../index.js";\nregister("numba", PoolLayer, () => 1);\nthrow new Error("plugin bug");\n',
      ),
    );
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    const [first] = result.stdout.trim().split("\n");
    expect(JSON.parse(first as string)).toEqual({ error: "plugin bug", jax: "jax" });
    const out = lastJson(result.stdout);
    // The registration module runs after the dispatch module: what it registered before it threw landed.
    expect(out.states).toEqual(["PoolLayer:applied", "PoolLayer:applied"]);
    const problems = JSON.stringify(out.problems);
    expect(problems).toContain("ml-ops's registration module for numba");
    expect(problems).toContain("did not finish evaluating");
    expect(problems).toContain("Im2Col on numba was expected");
  });

  it("a CommonJS registration module throws: the same, and the process lives on (Node 20 turned the throw into an uncaught exception)", async () => {
    const tree = brokenPlugin("");
    const json = JSON.parse(tree["node_modules/ml-ops/package.json"] as string);
    json.dispatchHook.registrations.numba = "./dispatch/numba.cjs";
    tree["node_modules/ml-ops/package.json"] = JSON.stringify(json);
    tree["node_modules/ml-ops/dispatch/numba.cjs"] = 'throw new Error("plugin bug");\n';
    const result = await run(makeTree(tree), ["--import", loader, "main.mjs"]);
    const [first] = result.stdout.trim().split("\n");
    expect(JSON.parse(first as string), result.stderr).toEqual({ error: "plugin bug", jax: "jax" });
    const problems = JSON.stringify(lastJson(result.stdout).problems);
    expect(problems).toContain("ml-ops's registration module for numba");
    expect(problems).toContain("did not finish evaluating");
    expect(result.code).toBe(0);
  });

  it("a registration module imports something that does not exist: the same, with Node's own error", async () => {
    const dir = makeTree(brokenPlugin('import "./no-such-file.js";\n'));
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    const [first] = result.stdout.trim().split("\n");
    expect(JSON.parse(first as string)).toEqual({ error: "ERR_MODULE_NOT_FOUND", jax: "jax" });
    const out = lastJson(result.stdout);
    expect(out.states).toEqual(["PoolLayer:applied"]);
    expect(JSON.stringify(out.problems)).toContain("PoolLayer on numba was expected");
    // The cause, by name: the plugin's module and what it imports, not the framework's module alone
    // (found by a new user's trial: the audit blamed the dispatch module for "never finished evaluating").
    expect(JSON.stringify(out.problems)).toContain(
      `ml-ops's registration module for numba (${pathToFileURL(join(dir, "node_modules/ml-ops/dispatch/numba.js")).href}) imports \\"./no-such-file.js\\", which does not resolve`,
    );
  });

  // Before, the backend's import failed with Node's own error, naming no plugin:
  // ERR_UNSUPPORTED_DIR_IMPORT, ERR_UNKNOWN_FILE_EXTENSION, ERR_IMPORT_ASSERTION_TYPE_MISSING.
  it.each([
    ["./dispatch", "is a directory"],
    ["./", "is a directory"],
    ["./readme.txt", "is not a JavaScript or TypeScript module"],
    ["./package.json", "is not a JavaScript or TypeScript module"],
  ])("a registration path that is not a module (%s) is skipped and recorded, as one that does not exist", async (path, why) => {
    const tree = brokenPlugin("");
    const json = JSON.parse(tree["node_modules/ml-ops/package.json"] as string);
    json.dispatchHook.registrations.numba = path;
    tree["node_modules/ml-ops/package.json"] = JSON.stringify(json);
    tree["node_modules/ml-ops/readme.txt"] = "register PoolLayer for numba\n";
    const result = await run(makeTree(tree), ["--import", loader, "main.mjs"]);
    const [first] = result.stdout.trim().split("\n");
    expect(JSON.parse(first as string), result.stderr).toEqual({ jax: "jax" });
    const problems = JSON.stringify(lastJson(result.stdout).problems);
    expect(problems).toContain("ml-ops's registration module for numba");
    expect(problems).toContain("could not be loaded: ");
    expect(problems).toContain(why);
    expect(problems).toContain("The backend loaded without it.");
    expect(result.code).toBe(0);
  });

  // Where the hooks see require() (module.registerHooks), a CommonJS dispatch module that require()
  // loads has its registration modules required once it has loaded: a throw there is contained (an
  // import fails with it, as for ES modules), so it must be said.
  it.skipIf(hookMode(nodeVersion) === "register")(
    `require() of a CommonJS dispatch module whose registration module throws: contained, and a coded warning (Node ${nodeVersion})`,
    async () => {
      const tree = requiringApp("./dispatch/numba.cjs", { "node_modules/ml-ops/dispatch/numba.cjs": 'throw new Error("plugin bug.");\n' }, [
        'const { numbaFuncify } = require("tensorlab-cjs/link/numba/dispatch/basic.js");',
        'const { registry } = require("dispatch-hook");',
        "console.log(JSON.stringify({ loaded: typeof numbaFuncify.get, plugins: registry.verify().plugins.map((p) => p.state) }));",
      ]);
      const result = await run(makeTree(tree), ["--import", loader, "main.cjs"]);
      expect(lastJson(result.stdout), result.stderr).toEqual({ loaded: "function", plugins: ["failed"] });
      expect(result.stderr).toContain("[DISPATCH_HOOK_REGISTRATION_FAILED]");
      expect(result.stderr).toContain("ml-ops's registration module for numba");
      // One full stop after a message that ends with its own.
      expect(result.stderr).toContain("threw while it evaluated: plugin bug. The numba backend loaded without what it registers.");
    },
  );

  it.skipIf(hookMode(nodeVersion) === "register")(
    `a miss right after a registration module threw (in the same tick as its warning) names that module and its error (Node ${nodeVersion})`,
    async () => {
      const dir = makeTree({
        "node_modules/dispatch-hook": { symlink: "<repo>" },
        "node_modules/fw/package.json": JSON.stringify({
          name: "fw",
          type: "commonjs",
          dispatchHook: { backends: { numba: { module: "./numba.js", export: "numbaFuncify" } } },
        }),
        "node_modules/fw/numba.js": [
          'const { Dispatcher } = require("dispatch-hook");',
          'exports.numbaFuncify = new Dispatcher({ name: "numbaFuncify", backend: "numba" });',
          "exports.Elemwise = class Elemwise {};",
          "",
        ].join("\n"),
        "node_modules/pl/package.json": JSON.stringify({
          name: "pl",
          type: "commonjs",
          dispatchHook: { registrations: { numba: "./r.js" } },
        }),
        "node_modules/pl/r.js": 'throw new Error("cannot import the framework in a cycle");\n',
        "main.cjs": [
          'const fw = require("fw/numba.js");',
          "try { fw.numbaFuncify.resolve(new fw.Elemwise()); } catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message })); }",
          "",
        ].join("\n"),
        "package.json": JSON.stringify({ name: "app", dependencies: { fw: "*", pl: "*", "dispatch-hook": "*" } }),
      });
      const result = await run(dir, ["--import", loader, "main.cjs"]);
      const miss = lastJson(result.stdout) as { code: string; message: string };
      expect(miss.code, result.stderr).toBe("ERR_DISPATCH_NO_IMPL");
      expect(miss.message).toContain("pl's registration module for numba");
      expect(miss.message).toContain("threw while it evaluated: cannot import the framework in a cycle");
    },
  );

  // require() of the dispatch module is served on this Node only: it required a directory's index,
  // ran a text file as JavaScript, and took a JSON file as a module that registered nothing.
  it.skipIf(hookMode(nodeVersion) === "register")(
    `the same rule when require() loads a CommonJS dispatch module (Node ${nodeVersion}, module.registerHooks)`,
    async () => {
      const dir = makeTree(
        requiringApp(
          "./dispatch",
          { "node_modules/ml-ops/dispatch/index.js": 'throw new Error("a directory is not a registration module");\n' },
          [
            'require("tensorlab-cjs/link/numba/dispatch/basic.js");',
            'const { registry } = require("dispatch-hook");',
            "console.log(JSON.stringify({ plugins: registry.verify().plugins.map((p) => p.state + ': ' + p.error?.message) }));",
          ],
        ),
      );
      const result = await run(dir, ["--import", loader, "main.cjs"]);
      expect(lastJson(result.stdout).plugins, result.stderr).toEqual([
        expect.stringMatching(/^missing: .* is a directory, not a module file$/),
      ]);
    },
  );

  it("a backend declared twice with different modules: both are watched, both get the registrations, and a warning says so", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorlab: "*", "dispatch-hook": "*" },
        dispatchHook: { backends: { numba: { module: "./alt/numba.js", export: "numbaFuncify" } } },
      }),
      "alt/numba.js": 'import { Dispatcher } from "dispatch-hook";\nexport const numbaFuncify = new Dispatcher({ backend: "numba" });\n',
      // The framework names its numba module too (a named declaration, not the {backend} pattern).
      "node_modules/tensorlab/package.json": JSON.stringify({
        name: "tensorlab",
        type: "module",
        exports: { ".": "./index.js", "./link/*": "./link/*" },
        dispatchHook: { backends: { numba: { module: "./link/numba/dispatch/basic.js", export: "numbaFuncify" } } },
      }),
      "main.mjs": [
        'import "ml-ops/register-now.js";',
        'import { PoolLayer } from "ml-ops";',
        'const a = (await import("tensorlab/link/numba/dispatch/basic.js")).numbaFuncify;',
        'const b = (await import("./alt/numba.js")).numbaFuncify;',
        "console.log(JSON.stringify({ a: a.resolve(new PoolLayer())(), b: b.resolve(new PoolLayer())() }));",
        audit,
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.stderr).toContain("[ERR_DISPATCH_CONFIG_DUPLICATE]");
    expect(result.stderr).toContain("declared twice with different modules");
    const [first] = result.stdout.trim().split("\n");
    expect(JSON.parse(first as string)).toEqual({ a: "pooled", b: "pooled" });
    expect(lastJson(result.stdout)).toEqual({ states: ["PoolLayer:applied"], problems: [] });
  });

  it("a watched module file disappears between resolve and load: the app gets Node's own error, as without the loader", async () => {
    const deleter = [
      'import module from "node:module";',
      'import { unlinkSync } from "node:fs";',
      'import { fileURLToPath } from "node:url";',
      "const resolve = (specifier, context, next) => {",
      "  const result = next(specifier, context);",
      '  if (result.url.endsWith("/numba/dispatch/basic.js")) { try { unlinkSync(fileURLToPath(result.url)); } catch {} }',
      "  return result;",
      "};",
      // The same hook API as the loader uses on this Node, so the two chain.
      `if (${JSON.stringify(hookMode(nodeVersion))} === "registerHooks") module.registerHooks({ resolve });`,
      'else module.register("data:text/javascript," + encodeURIComponent(`import { unlinkSync } from "node:fs"; import { fileURLToPath } from "node:url"; export async function resolve(s, c, n) { const r = await n(s, c); if (r.url.endsWith("/numba/dispatch/basic.js")) { try { unlinkSync(fileURLToPath(r.url)); } catch {} } return r; }`));',
    ].join("\n");
    const files = {
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "deleter.mjs": deleter,
      "main.mjs": [
        'import "ml-ops/register-now.js";',
        "let code;",
        'try { await import("tensorlab/link/numba/dispatch/basic.js"); } catch (e) { code = e.code; }',
        "console.log(JSON.stringify({ code }));",
        audit,
      ].join("\n"),
    };
    const plain = await run(makeTree(files), ["--import", "./deleter.mjs", "main.mjs"]);
    const hooked = await run(makeTree(files), ["--import", loader, "--import", "./deleter.mjs", "main.mjs"]);
    const code = JSON.parse(plain.stdout.trim().split("\n")[0] as string).code;
    expect(code).toBe("ENOENT");
    expect(JSON.parse(hooked.stdout.trim().split("\n")[0] as string).code).toBe(code);
    expect(lastJson(hooked.stdout).states).toEqual(["PoolLayer:pending"]);
    expect(hooked.stderr).not.toContain("DISPATCH_HOOK");
  });

  it("an import cycle through a dispatch module: registrations land and the namespace is complete", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "node_modules/tensorlab/index.js": [
        "export class Op {}",
        'export { numbaFuncify } from "./link/numba/dispatch/basic.js";',
        "export const late = 'initialised';",
        "",
      ].join("\n"),
      "node_modules/tensorlab/link/numba/dispatch/basic.js": [
        'import { Dispatcher } from "dispatch-hook";',
        'import * as tensorlab from "../../../index.js";',
        'export const numbaFuncify = new Dispatcher({ backend: "numba" });',
        "export const sawIndex = () => tensorlab.late;",
        "",
      ].join("\n"),
      "main.mjs": [
        'import { numbaFuncify } from "tensorlab";',
        'import { sawIndex } from "tensorlab/link/numba/dispatch/basic.js";',
        'import { PoolLayer } from "ml-ops";',
        "console.log(JSON.stringify({ impl: numbaFuncify.resolve(new PoolLayer())(), late: sawIndex() }));",
        audit,
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.stderr).toBe("");
    const [first] = result.stdout.trim().split("\n");
    expect(JSON.parse(first as string)).toEqual({ impl: "pooled", late: "initialised" });
    expect(lastJson(result.stdout)).toEqual({ states: ["PoolLayer:applied"], problems: [] });
  });

  it("many concurrent dynamic imports of the same dispatch module and of different ones: each table gets each registration once", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "main.mjs": [
        'import { register, registry } from "dispatch-hook";',
        'import { PoolLayer } from "ml-ops";',
        'register("numba", PoolLayer, () => "numba");',
        'register("jax", PoolLayer, () => "jax");',
        "const specifiers = [];",
        'for (let i = 0; i < 40; i++) specifiers.push("tensorlab/link/numba/dispatch/basic.js", "tensorlab/link/jax/dispatch/basic.js");',
        'for (let i = 0; i < 5; i++) specifiers.push(import.meta.resolve("tensorlab/link/numba/dispatch/basic.js") + "?copy=" + i);',
        "const modules = await Promise.all(specifiers.map((s) => import(s)));",
        "const tables = new Set(modules.map((m) => m.numbaFuncify ?? m.jaxFuncify));",
        "const answers = [...tables].map((t) => t.resolve(new PoolLayer())());",
        "const applied = registry.audit.events().filter((e) => e.kind === 'applied').length;",
        "console.log(JSON.stringify({ tables: tables.size, answers: [...new Set(answers)].sort(), applied, ok: registry.verify().ok }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(result.stderr).toBe("");
    // numba, jax and five query copies of numba: seven tables, one application each.
    expect(lastJson(result.stdout)).toEqual({ tables: 7, answers: ["jax", "numba"], applied: 7, ok: true });
  });
});
