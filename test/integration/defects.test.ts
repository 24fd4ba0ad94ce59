/**
 * Defects found by reading the registry and the loader, each in a real process. Each of these
 * programs printed a wrong answer before its fix.
 */
import { describe, expect, it } from "vitest";
import { appJson, lastJson, loader, makeTree, run } from "./fixture.js";
import { frameworkEsm, plugin } from "./trees.js";

function program(lines: readonly string[]) {
  return makeTree({ ...frameworkEsm, ...plugin("tensorlab", false), "main.mjs": lines.join("\n") });
}

const table =
  "class Table { constructor() { this.m = new Map(); } register(t, f) { this.m.set(t, f); } get(t) { return this.m.get(t); } unregister(t) { this.m.delete(t); } }";

describe("defects", () => {
  it("a withdrawn table is not applied to again when the registry starts listening anew", async () => {
    const dir = program([
      'import { announce, createRegistry } from "dispatch-hook";',
      table,
      "class A {} class B {}",
      "const numba = new Table();",
      'announce("numba", numba);',
      "const registry = createRegistry();",
      'const a = registry.register("numba", A, () => "a");',
      // The table provided before the registry existed got A: the registry was listening.
      "const before = numba.m.has(A);",
      'registry.provide("numba", numba).dispose();',
      "a.dispose();",
      'registry.register("numba", B, () => "b");',
      "console.log(JSON.stringify({ before, a: numba.m.has(A), b: numba.m.has(B) }));",
    ]);
    const result = await run(dir, ["main.mjs"]);
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ before: true, a: false, b: false });
  });

  it("a table that refuses to give an entry back: the audit says the implementation is still there", async () => {
    const dir = program([
      'import { createRegistry } from "dispatch-hook";',
      "class A {}",
      "const entries = new Map();",
      'const stubborn = { register(t, f) { entries.set(t, f); }, get(t) { return entries.get(t); }, unregister() { throw new Error("read-only table"); } };',
      "const registry = createRegistry();",
      'registry.provide("numba", stubborn);',
      'registry.register("numba", A, () => "a").dispose();',
      "const report = registry.verify();",
      "console.log(JSON.stringify({ stillThere: entries.has(A), ok: report.ok, problems: report.problems.map((p) => p.kind + ': ' + p.message) }));",
    ]);
    const out = lastJson((await run(dir, ["main.mjs"])).stdout);
    expect(out.stillThere).toBe(true);
    expect(out.ok).toBe(false);
    expect(JSON.stringify(out.problems)).toContain(
      "stuck: A on numba (registration #0) was disposed, but the table refused to give its entry back (read-only table)",
    );
  });

  it("the same implementation registered by two plugins: disposing one leaves the other's in place", async () => {
    const dir = program([
      'import { createRegistry, Dispatcher } from "dispatch-hook";',
      "class A {}",
      'const shared = () => "shared";',
      "const registry = createRegistry();",
      'const numba = new Dispatcher({ backend: "numba" });',
      'registry.provide("numba", numba);',
      'const first = registry.register("numba", A, shared);',
      'const second = registry.register("numba", A, shared);',
      "first.dispose();",
      "let still; try { still = numba.resolve(new A())(); } catch (e) { still = e.code; }",
      "console.log(JSON.stringify({ distinct: first !== second, still, second: second.state }));",
    ]);
    expect(lastJson((await run(dir, ["main.mjs"])).stdout)).toEqual({ distinct: true, still: "shared", second: "applied" });
  });

  it("a module waiting in an import cycle is not reported once it has finished", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      // The numba module imports a helper that imports it back and asks for the audit mid-cycle.
      "node_modules/tensorlab/link/numba/dispatch/basic.js": [
        'import { Dispatcher } from "dispatch-hook";',
        'import { during } from "../../helper.js";',
        'export const numbaFuncify = new Dispatcher({ backend: "numba" });',
        "export { during };",
      ].join("\n"),
      "node_modules/tensorlab/link/helper.js": [
        'import { registry } from "dispatch-hook";',
        'import "./numba/dispatch/basic.js";',
        "export const during = registry.verify().problems.map((p) => p.kind);",
      ].join("\n"),
      "main.mjs": [
        'import "ml-ops/register-now.js";',
        'import { during } from "tensorlab/link/numba/dispatch/basic.js";',
        'import { registry } from "dispatch-hook";',
        "console.log(JSON.stringify({ during, after: registry.verify().problems.map((p) => p.kind) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(lastJson(result.stdout)).toEqual({ during: ["pending", "loader"], after: [] });
  });

  it("registry.verify(), format() and threadAudit() give one answer, loader findings included", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/tensorlab/link/numba/dispatch/basic.js": 'throw new Error("numba is not installed");\n',
      "main.mjs": [
        'import "ml-ops/register-now.js";',
        'try { await import("tensorlab/link/numba/dispatch/basic.js"); } catch {}',
        'import { registry, threadAudit } from "dispatch-hook";',
        "const a = registry.verify(); const b = threadAudit();",
        "console.log(JSON.stringify({ same: JSON.stringify(a.problems) === JSON.stringify(b.problems), kinds: a.problems.map((p) => p.kind), inFormat: registry.format().includes('never finished evaluating') }));",
      ].join("\n"),
    });
    expect(lastJson((await run(dir, ["--import", loader, "main.mjs"])).stdout)).toEqual({
      same: true,
      kinds: ["pending", "loader"],
      inFormat: true,
    });
  });

  it("the audit log cannot be written from outside, so no forged event can make verify() say ok", async () => {
    const dir = program([
      'import { createRegistry } from "dispatch-hook";',
      "class A {}",
      "const registry = createRegistry();",
      'registry.register("numba", A, () => 1);',
      "const forged = typeof registry.audit.record === 'function';",
      "console.log(JSON.stringify({ forged, ok: registry.verify({ backends: ['numba'] }).ok }));",
    ]);
    expect(lastJson((await run(dir, ["main.mjs"])).stdout)).toEqual({ forged: false, ok: false });
  });

  it("install() refuses an unknown mode and a bad root with a code, instead of installing nothing or failing inside Node", async () => {
    const dir = program([
      'import { install } from "dispatch-hook/hooks";',
      "const codes = [];",
      'for (const options of [{ mode: "registerhooks" }, { root: 5 }]) { try { install(options); codes.push("installed"); } catch (e) { codes.push(e.code + " " + e.message); } }',
      "console.log(JSON.stringify({ codes }));",
    ]);
    const { codes } = lastJson((await run(dir, ["main.mjs"])).stdout) as { codes: string[] };
    expect(codes[0]).toContain(
      'ERR_DISPATCH_INVALID_OPTION install(): "mode" must be one of "registerHooks", "register", got "registerhooks" (did you mean "registerHooks"?)',
    );
    expect(codes[1]).toContain('ERR_DISPATCH_INVALID_OPTION install(): "root" must be a string, got number 5');
  });

  it("a require cycle that reaches a CommonJS dispatch module through a sibling's relative require gets the module's own exports", async () => {
    // cpu/index.js and cpu/helper.js both require "./table.js" from one directory: Node caches that
    // resolution past the hooks, so helper.js, required by table.js while it loads, reaches the
    // facade before the facade has the original's exports.
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/cjskit/package.json": JSON.stringify({
        name: "cjskit",
        main: "./cpu/index.js",
        dispatchHook: { backends: { cpu: { module: "./cpu/table.js", export: "cpuTable" } } },
      }),
      "node_modules/cjskit/cpu/index.js": 'module.exports = require("./table.js");\n',
      "node_modules/cjskit/cpu/table.js":
        'const helper = require("./helper.js");\nclass Base {}\nexports.Base = Base;\nexports.cpuTable = new Map();\nexports.make = () => helper.make();\n',
      "node_modules/cjskit/cpu/helper.js":
        'const table = require("./table.js");\nexports.make = () => new (class extends table.Base {})();\n',
      "package.json": appJson({ dependencies: { cjskit: "*", "dispatch-hook": "*" } }),
      "main.cjs": 'const kit = require("cjskit");\nconsole.log(JSON.stringify({ made: kit.make() instanceof kit.Base }));\n',
    });
    const result = await run(dir, ["--import", loader, "main.cjs"]);
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ made: true });
  });

  describe("a dispatch module that awaits at its top level (or a module it imports does)", () => {
    // ES modules evaluate a dependency that waits on nothing without waiting for an earlier sibling
    // that awaits: a registration module that does not import the dispatch module runs while that
    // module is still at its await, before the steps (which import it) can open its window. The
    // early markers open it first.
    const awaiting = (where: "itself" | "a kernel it imports") => ({
      ...frameworkEsm,
      "node_modules/tensorlab/link/numba/dispatch/basic.js": [
        'import { Dispatcher } from "dispatch-hook";',
        ...(where === "itself" ? ["await new Promise((resolve) => setTimeout(resolve, 20));"] : ['import "./kernel.js";']),
        'export const numbaFuncify = new Dispatcher({ name: "numbaFuncify", backend: "numba" });',
        "",
      ].join("\n"),
      "node_modules/tensorlab/link/numba/dispatch/kernel.js": "await new Promise((resolve) => setTimeout(resolve, 20));\n",
      ...plugin("tensorlab", true),
      "main.mjs": [
        'import { threadAudit } from "dispatch-hook";',
        'import { numbaFuncify } from "tensorlab/link/numba/dispatch/basic.js";',
        'import { PoolLayer } from "ml-ops";',
        "const report = threadAudit();",
        "const pools = report.registrations.filter((r) => r.op === 'PoolLayer').map((r) => [r.origin?.plugin, r.state]);",
        "console.log(JSON.stringify({ ran: numbaFuncify.resolve(new PoolLayer())(), pools, ok: report.ok }));",
      ].join("\n"),
    });
    /** A second plugin that registers the same op type: a conflict between plugins. */
    const rival = {
      "node_modules/rival-ops/package.json": JSON.stringify({
        name: "rival-ops",
        type: "module",
        dispatchHook: { registrations: { numba: "./numba.js" } },
      }),
      "node_modules/rival-ops/numba.js":
        'import { register } from "dispatch-hook";\nimport { PoolLayer } from "ml-ops";\nregister("numba", PoolLayer, () => "rival");\n',
    };

    for (const where of ["itself", "a kernel it imports"] as const) {
      it(`awaiting ${where}: the plugin's registration lands, recorded as the plugin's, and the audit says ok`, async () => {
        const dir = makeTree(awaiting(where));
        const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
        expect(lastJson(result.stdout)).toEqual({ ran: "pooled", pools: [["ml-ops", "applied"]], ok: true });
        expect(result.stderr).not.toContain("did not finish");
        expect(result.code).toBe(0);
      });

      it(`awaiting ${where}: a conflict between two plugins is contained and recorded, never thrown into the app's import`, async () => {
        const tree = awaiting(where);
        const dir = makeTree({
          ...tree,
          ...rival,
          "package.json": JSON.stringify({
            name: "app",
            type: "module",
            dependencies: { tensorlab: "*", "dispatch-hook": "*", "ml-ops": "*", "rival-ops": "*" },
          }),
        });
        const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
        const out = lastJson(result.stdout);
        expect(out.pools).toEqual([
          ["ml-ops", "applied"],
          ["rival-ops", "refused"],
        ]);
        expect(out.ran).toBe("pooled");
        expect(result.stderr).toContain("[conflict] PoolLayer already has an implementation on numba");
        expect(result.code).toBe(1);
      });
    }
  });

  it("a backend declared by name after a pattern that also matches its module: the name's export is the table", async () => {
    const dir = makeTree({
      "node_modules/fw/package.json": JSON.stringify({
        name: "fw",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: {
          backends: {
            "*": { module: "./backends/{backend}.js", export: "table" },
            dflt: { module: "./backends/dflt.js", export: "default" },
          },
        },
      }),
      "node_modules/fw/backends/dflt.js": "export default new Map();\n",
      "node_modules/fw/backends/gpu.js": "export const table = new Map();\n",
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "package.json": appJson({ type: "module", dependencies: { fw: "*", "dispatch-hook": "*" } }),
      "main.mjs": [
        'import { register } from "dispatch-hook";',
        "class Op {}",
        'register("dflt", Op, () => "dflt");',
        'register("gpu", Op, () => "gpu");',
        'const { default: dflt } = await import("fw/backends/dflt.js");',
        'const { table: gpu } = await import("fw/backends/gpu.js");',
        "console.log(JSON.stringify({ dflt: dflt.get(Op)?.(), gpu: gpu.get(Op)?.() }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(lastJson(result.stdout)).toEqual({ dflt: "dflt", gpu: "gpu" });
    expect(result.code).toBe(0);
  });

  it("a table that is a class (static register and get) counts as loaded in the audit, as it does for registrations", async () => {
    const dir = makeTree({
      "node_modules/fw/package.json": JSON.stringify({
        name: "fw",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: { backends: { cls: { module: "./cls.js", export: "table" } } },
      }),
      "node_modules/fw/cls.js":
        "const m = new Map();\nexport class table {\n  static register(t, f) { m.set(t, f); }\n  static get(t) { return m.get(t); }\n  static unregister(t) { m.delete(t); }\n}\n",
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "package.json": appJson({ type: "module", dependencies: { fw: "*", "dispatch-hook": "*" } }),
      "main.mjs": [
        'import { register, threadAudit } from "dispatch-hook";',
        "class Op {}",
        'register("cls", Op, () => "cls");',
        'const { table } = await import("fw/cls.js");',
        "const backend = threadAudit().backends.find((b) => b.backend === 'cls');",
        "console.log(JSON.stringify({ ran: table.get(Op)?.(), loaded: backend?.loaded, tables: backend?.tables }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(lastJson(result.stdout)).toEqual({ ran: "cls", loaded: true, tables: 1 });
  });

  it("messages never say 'undefined undefined'", async () => {
    const dir = program([
      'import { createRegistry } from "dispatch-hook";',
      "try { createRegistry().register(undefined, class {}, () => 1); } catch (e) { console.log(JSON.stringify({ message: e.message })); }",
    ]);
    const { message } = lastJson((await run(dir, ["main.mjs"])).stdout) as { message: string };
    expect(message).toContain("got undefined");
    expect(message).not.toContain("undefined undefined");
  });
});
