/**
 * Registration modules run after their backend's module, as the Python import hook's did, and a
 * broken plugin never takes a backend down. A framework (tensorkit) whose cpu backend has a
 * built-in op (Add), and plugins whose registration modules import the table and write into it.
 */
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import type { Tree } from "./fixture.js";
import { appJson, lastJson, loader, makeTree, nodeVersion, run } from "./fixture.js";
import { nameKeyed } from "./trees.js";

const mode = hookMode(nodeVersion);

function framework(): Tree {
  return {
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "node_modules/tensorkit/package.json": JSON.stringify({
      name: "tensorkit",
      type: "module",
      exports: { ".": "./index.js", "./*": "./*" },
      dependencies: { "dispatch-hook": "*" },
      dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
    }),
    // The index re-exports a helper and loads the cpu backend eagerly.
    "node_modules/tensorkit/index.js": 'export { helper, Add } from "./helper.js";\nimport "./backends/cpu/table.js";\n',
    "node_modules/tensorkit/helper.js": 'export class Add {}\nexport const helper = (name) => () => name + " on cpu";\n',
    "node_modules/tensorkit/backends/cpu/table.js": [
      'import { Dispatcher } from "dispatch-hook";',
      'import { Add } from "../../helper.js";',
      'export const cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });',
      'cpuTable.register(Add, () => "add on cpu");',
    ].join("\n"),
    "node_modules/tensorkit/backends/gpu/table.js": [
      'import { Dispatcher } from "dispatch-hook";',
      'export const gpuTable = new Dispatcher({ name: "gpuTable", backend: "gpu" });',
    ].join("\n"),
    "node_modules/kit-ops/ops.js": "export class Conv {}\nexport class Pool {}\n",
  };
}

function plugin(
  name: string,
  registrations: Record<string, string>,
  files: Record<string, string>,
  expects?: Record<string, string[]>,
): Tree {
  const tree: Tree = {
    [`node_modules/${name}/package.json`]: JSON.stringify({
      name,
      type: "module",
      exports: { "./*": "./*" },
      dependencies: { tensorkit: "*", "dispatch-hook": "*" },
      dispatchHook: { registrations, ...(expects === undefined ? {} : { expects }) },
    }),
  };
  for (const [path, source] of Object.entries(files)) tree[`node_modules/${name}/${path}`] = source;
  return tree;
}

const app = (deps: string[]) =>
  JSON.stringify({
    name: "app",
    type: "module",
    dependencies: Object.fromEntries(["tensorkit", "dispatch-hook", ...deps].map((d) => [d, "*"])),
  });

/** Loads the cpu backend and reports what its table answers for Add (built in) and Conv (from plugins). */
const main = [
  'import { Add } from "tensorkit";',
  'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
  'import { Conv } from "kit-ops/ops.js";',
  "const call = (type) => { try { return cpuTable.resolve(new type())(); } catch (e) { return e.code; } };",
  'const { registry } = await import("dispatch-hook");',
  "const report = registry.verify();",
  "console.log(JSON.stringify({ add: call(Add), conv: call(Conv), problems: report.problems.map((p) => p.kind + ': ' + p.message), outside: report.outside.map((w) => w.op + ' by ' + w.plugin), states: report.registrations.map((r) => r.op + ':' + r.state + (r.origin ? ':' + r.origin.plugin : '')) }));",
].join("\n");

/** A registration module in the style of the Python plugins': it imports the table and writes into it. */
const directWrite =
  'import { cpuTable } from "tensorkit/backends/cpu/table.js";\nimport { Conv } from "../ops.js";\ncpuTable.register(Conv, () => "conv on cpu");\n';

describe(`registration modules on Node ${nodeVersion} (${mode})`, () => {
  it("a registration module that imports the table and writes into it directly runs after the table exists, and is audited", async () => {
    const dir = makeTree({
      ...framework(),
      ...plugin(
        "kit-ops",
        { cpu: "./reg/cpu.js" },
        {
          "reg/cpu.js": directWrite,
        },
        { cpu: ["Conv"] },
      ),
      "package.json": app(["kit-ops"]),
      "main.mjs": main,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(result.stderr).not.toContain("ReferenceError");
    const out = lastJson(result.stdout);
    expect(out).toMatchObject({ add: "add on cpu", conv: "conv on cpu", problems: [], outside: ["Conv by kit-ops"] });
    // The exit audit shows the write, who made it, and counts it for the expectation.
    expect(result.stderr).toMatch(/Conv\s+applied\s+outside\s+added by .*kit-ops\/reg\/cpu\.js, outside the registry \(kit-ops\)/);
    // No registration was made, only a direct write: the verdict does not say one landed.
    expect(result.stderr).toContain("ok: every entry checked is in its table");
    expect(result.code).toBe(0);
  });

  it("a table keyed by op name: a plugin's direct write of a string key is audited, and the keys a table holds count for expectations", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      ...nameKeyed,
      "main.mjs": [
        'import { cpuTable } from "namekit/cpu.js";',
        'const { registry } = await import("dispatch-hook");',
        "const report = registry.verify();",
        'console.log(JSON.stringify({ conv: cpuTable.get("Conv")?.(), add: cpuTable.get("Add")(), problems: report.problems.map((p) => p.message), outside: report.outside.map((w) => w.op + " by " + w.plugin) }));',
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(lastJson(result.stdout)).toEqual({ conv: "conv on cpu", add: "add on cpu", problems: [], outside: ["Conv by kit-ops"] });
    expect(result.stderr).toMatch(/Conv\s+applied\s+outside\s+added by .*kit-ops\/reg\/cpu\.js, outside the registry \(kit-ops\)/);
    // No registration was made, only a direct write: the verdict does not say one landed.
    expect(result.stderr).toContain("ok: every entry checked is in its table");
    expect(result.code).toBe(0);
  });

  it("a registration module may import from a framework whose index loads the backend eagerly", async () => {
    const dir = makeTree({
      ...framework(),
      ...plugin(
        "kit-ops",
        { cpu: "./reg/cpu.js" },
        {
          "reg/cpu.js": [
            'import { register } from "dispatch-hook";',
            'import { helper } from "tensorkit";',
            'import { Conv } from "../ops.js";',
            'register("cpu", Conv, helper("conv"));',
          ].join("\n"),
        },
      ),
      "package.json": app(["kit-ops"]),
      "main.mjs": main,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toMatchObject({
      add: "add on cpu",
      conv: "conv on cpu",
      problems: [],
      states: ["Conv:applied:kit-ops"],
    });
    expect(result.code).toBe(0);
  });

  it("a missing registration module leaves the backend working, and the audit names the plugin and the module", async () => {
    const dir = makeTree({
      ...framework(),
      ...plugin("kit-ops", { cpu: "./reg/cpu.js" }, {}),
      "package.json": app(["kit-ops"]),
      "main.mjs": main,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    const out = lastJson(result.stdout);
    expect(out).toMatchObject({ add: "add on cpu", conv: "ERR_DISPATCH_NO_IMPL" });
    expect(JSON.stringify(out.problems)).toContain("kit-ops's registration module for cpu");
    expect(JSON.stringify(out.problems)).toContain("reg/cpu.js");
    expect(result.stderr).toContain("could not be loaded");
    expect(result.code).toBe(1);
  });

  it("a registration module that throws: the error is the plugin's own, from its module, and the audit records it", async () => {
    const dir = makeTree({
      ...framework(),
      ...plugin("kit-ops", { cpu: "./reg/cpu.js" }, { "reg/cpu.js": 'throw new Error("kit-ops is broken");\n' }),
      "package.json": app(["kit-ops"]),
      "main.mjs": [
        'let error; try { await import("tensorkit/backends/cpu/table.js"); } catch (e) { error = { message: e.message, frame: e.stack.split("\\n")[1] }; }',
        'const { registry } = await import("dispatch-hook");',
        "console.log(JSON.stringify({ error, problems: registry.verify().problems.map((p) => p.message) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    const out = lastJson(result.stdout) as { error: { message: string; frame: string }; problems: string[] };
    expect(out.error.message).toBe("kit-ops is broken");
    expect(out.error.frame).toContain("kit-ops/reg/cpu.js");
    expect(out.problems.join("\n")).toContain("kit-ops's registration module for cpu");
    expect(out.problems.join("\n")).toContain("did not finish evaluating");
    expect(result.code).toBe(1);
  });

  it("two plugins register the same op: the backend loads, the first wins, the second is refused and recorded", async () => {
    const reg = (by: string) =>
      `import { register } from "dispatch-hook";\nimport { Conv } from "kit-ops/ops.js";\nregister("cpu", Conv, () => "conv by ${by}");\n`;
    const dir = makeTree({
      ...framework(),
      ...plugin("kit-ops", { cpu: "./reg/cpu.js" }, { "reg/cpu.js": reg("kit-ops") }),
      ...plugin("more-ops", { cpu: "./cpu.js" }, { "cpu.js": reg("more-ops") }),
      "package.json": app(["kit-ops", "more-ops"]),
      "main.mjs": main,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    const out = lastJson(result.stdout) as { add: string; conv: string; problems: string[]; states: string[] };
    expect(out.add).toBe("add on cpu");
    expect(out.conv).toBe("conv by kit-ops");
    expect(out.states).toEqual(["Conv:applied:kit-ops", "Conv:refused:more-ops"]);
    expect(out.problems.join("\n")).toContain("a declarative registration of more-ops");
    expect(result.code).toBe(1);
  });

  it("registration modules that import each other: what each registers is its own plugin's", async () => {
    const reg = (by: string, imports = "") =>
      `${imports}import { register } from "dispatch-hook";\nimport { Conv } from "kit-ops/ops.js";\nregister("cpu", Conv, () => "conv by ${by}");\n`;
    const dir = makeTree({
      ...framework(),
      ...plugin("kit-ops", { cpu: "./reg/cpu.js" }, { "reg/cpu.js": reg("kit-ops", 'import "more-ops/cpu.js";\n') }),
      ...plugin("more-ops", { cpu: "./cpu.js" }, { "cpu.js": reg("more-ops") }),
      "package.json": app(["kit-ops", "more-ops"]),
      "main.mjs": main,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    const out = lastJson(result.stdout) as { conv: string; problems: string[]; states: string[] };
    // more-ops's module runs first (kit-ops's imports it), so its registration is the one in the table.
    expect(out.conv).toBe("conv by more-ops");
    expect(out.states).toEqual(["Conv:applied:more-ops", "Conv:refused:kit-ops"]);
    expect(out.problems.join("\n")).toContain("(registration #0, more-ops's)");
  });

  it("a plugin's registration refused by a backend the app sealed is not thrown into the import, and fails a strict audit", async () => {
    const dir = makeTree({
      ...framework(),
      ...plugin(
        "kit-ops",
        { gpu: "./reg/gpu.js" },
        {
          "reg/gpu.js":
            'import { register } from "dispatch-hook";\nimport { Conv } from "../ops.js";\nregister("gpu", Conv, () => "conv on gpu");\n',
        },
      ),
      "package.json": app(["kit-ops"]),
      "main.mjs": [
        'import { registry } from "dispatch-hook";',
        'registry.seal("gpu");',
        'const { gpuTable } = await import("tensorkit/backends/gpu/table.js");',
        "console.log(JSON.stringify({ loaded: typeof gpuTable.resolve }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(lastJson(result.stdout)).toEqual({ loaded: "function" });
    expect(result.stderr).toMatch(/\[failed\] Conv on gpu \(registered at [^)]+\) was refused: The gpu backend is sealed/);
    expect(result.stderr).toContain("a declarative registration of kit-ops");
    expect(result.code).toBe(1);
  });

  it("registration modules that share a dependency which awaits at its top level: each registration is its own plugin's, and their conflict is recorded, not thrown", async () => {
    // Once the shared module settles, the later modules' bodies run in the context the first one's evaluation left.
    const reg = (ops: string[], own = "") =>
      `import { register } from "dispatch-hook";\nimport "kit-ops/slow.js";\nimport { Conv, Pool } from "kit-ops/ops.js";\n${own}${ops
        .map((op) => `register("cpu", ${op}, () => "${op} by " + import.meta.url.split("/").at(-2));`)
        .join("\n")}\n`;
    const dir = makeTree({
      ...framework(),
      ...plugin(
        "kit-ops",
        { cpu: "./reg/cpu.js" },
        {
          // The first awaits on its own too, after the shared module: the next one's body runs while it waits.
          "reg/cpu.js": reg(["Conv"], "await new Promise((resolve) => setTimeout(resolve, 30));\n"),
          "slow.js": "await new Promise((resolve) => setTimeout(resolve, 20));\nexport const slow = true;\n",
        },
      ),
      ...plugin("more-ops", { cpu: "./cpu.js" }, { "cpu.js": reg(["Pool", "Conv"]) }),
      ...plugin("third-ops", { cpu: "./cpu.js" }, { "cpu.js": reg(["Third"], "class Third {}\n") }),
      "package.json": app(["kit-ops", "more-ops", "third-ops"]),
      "main.mjs": main,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    const out = lastJson(result.stdout) as { conv: string; problems: string[]; states: string[] };
    // more-ops's body runs while kit-ops's waits on its own await, so more-ops registers Conv first.
    expect(out.conv).toBe("Conv by more-ops");
    expect(out.states).toEqual(["Pool:applied:more-ops", "Conv:applied:more-ops", "Third:applied:third-ops", "Conv:refused:kit-ops"]);
    expect(out.problems.join("\n")).toContain("(registration #1, more-ops's)");
    expect(out.problems.join("\n")).toContain("a declarative registration of kit-ops");
  });

  for (const when of ["before", "after"] as const) {
    it(`an app's explicit override wins over a plugin's declarative registration, registered ${when} the backend loads`, async () => {
      const dir = makeTree({
        ...framework(),
        ...plugin(
          "kit-ops",
          { cpu: "./reg/cpu.js" },
          {
            "reg/cpu.js":
              'import { register } from "dispatch-hook";\nimport { Conv } from "../ops.js";\nregister("cpu", Conv, () => "conv by kit-ops");\n',
          },
        ),
        "package.json": app(["kit-ops"]),
        "main.mjs": [
          'import { register as appRegister } from "dispatch-hook";',
          'import * as appOps from "kit-ops/ops.js";',
          'const override = () => appRegister("cpu", appOps.Conv, () => "conv by the app", { override: true });',
          when === "before" ? "override();" : "",
          'await import("tensorkit/backends/cpu/table.js");',
          when === "after" ? "override();" : "",
          main,
        ].join("\n"),
      });
      const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
      expect(result.stderr).toBe("");
      const out = lastJson(result.stdout) as { conv: string; problems: string[]; states: string[] };
      expect(out.conv).toBe("conv by the app");
      expect(out.problems).toEqual([]);
      expect(out.states.sort()).toEqual(["Conv:applied", "Conv:superseded:kit-ops"]);
      expect(result.code).toBe(0);
    });
  }

  it.skipIf(mode === "register")("require() of an ES dispatch module runs its registration modules after it, too", async () => {
    const dir = makeTree({
      ...framework(),
      ...plugin(
        "kit-ops",
        { cpu: "./reg/cpu.js" },
        {
          "reg/cpu.js": directWrite,
        },
      ),
      "package.json": app(["kit-ops"]),
      "main.cjs": [
        'const { cpuTable } = require("tensorkit/backends/cpu/table.js");',
        'const { Conv } = require("kit-ops/ops.js");',
        "console.log(JSON.stringify({ conv: cpuTable.resolve(new Conv())() }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.cjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ conv: "conv on cpu" });
  });

  it("a dispatch module used again after its generated modules have loaded: a later import, require(esm), a late backend and a CommonJS one required twice", async () => {
    const dir = makeTree({
      ...framework(),
      ...plugin(
        "kit-ops",
        { cpu: "./reg/cpu.js", gpu: "./reg/gpu.js", cjs: "./reg/cjs.cjs" },
        {
          "reg/cpu.js": directWrite,
          "reg/gpu.js":
            'import { gpuTable } from "tensorkit/backends/gpu/table.js";\nimport { Conv } from "../ops.js";\ngpuTable.register(Conv, () => "conv on gpu");\n',
          "reg/cjs.cjs":
            'const { cjsTable } = require("tensorkit/backends/cjs/table.js");\nconst { Conv } = require("../ops.cjs");\ncjsTable.register(Conv, () => "conv on cjs");\n',
          "ops.cjs": "exports.Conv = class Conv {};\n",
        },
      ),
      "node_modules/tensorkit/backends/cjs/package.json": JSON.stringify({ type: "commonjs" }),
      "node_modules/tensorkit/backends/cjs/table.js":
        'const { Dispatcher } = require("dispatch-hook");\nexports.cjsTable = new Dispatcher({ name: "cjsTable", backend: "cjs" });\n',
      "package.json": app(["kit-ops"]),
      // Every module the app loads after the first backend resolves with no generated module
      // awaited, so in-thread hooks have detached load() by then.
      "sub/again.cjs": 'module.exports = require("tensorkit/backends/cjs/table.js");\n',
      "later.mjs": 'export { cpuTable as again } from "tensorkit/backends/cpu/table.js";\n',
      "main.mjs": [
        'import { createRequire } from "node:module";',
        'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
        'import { Conv } from "kit-ops/ops.js";',
        'const { again } = await import("./later.mjs");',
        "const require = createRequire(import.meta.url);",
        // require(esm) of a module that import() has already loaded: on Node 20 (module.register) the hooks do not see it.
        `const required = ${JSON.stringify(mode)} === "registerHooks" ? require("tensorkit/backends/cpu/table.js").cpuTable : cpuTable;`,
        'const { gpuTable } = await import("tensorkit/backends/gpu/table.js");',
        'const cjs = require("tensorkit/backends/cjs/table.js");',
        'const cjsAgain = require("tensorkit/backends/cjs/table.js");',
        // From another directory (no shared require resolution cache), and once more after the
        // generated module has left require.cache, which makes Node load it again.
        'const fromSub = require("./sub/again.cjs");',
        // A registration through the registry lands on every instance of the module.
        'const { register, registry } = await import("dispatch-hook");',
        "class Late {}",
        'register("cjs", Late, () => "late on cjs");',
        'delete require.cache[require.resolve("tensorkit/backends/cjs/table.js")];',
        'const afterDelete = require("tensorkit/backends/cjs/table.js");',
        'const { Conv: CjsConv } = require("kit-ops/ops.cjs");',
        "const call = (table, type) => { try { return table.resolve(new type())(); } catch (e) { return e.code; } };",
        "console.log(JSON.stringify({ same: again === cpuTable && required === cpuTable && cjs === cjsAgain && fromSub.cjsTable === cjs.cjsTable, fresh: afterDelete.cjsTable !== cjs.cjsTable, afterDelete: call(afterDelete.cjsTable, Late), cpu: cpuTable.resolve(new Conv())(), gpu: gpuTable.resolve(new Conv())(), cjs: call(cjs.cjsTable, CjsConv), problems: registry.verify().problems.map((p) => p.message) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    const out = lastJson(result.stdout);
    expect(out).toMatchObject({ same: true, cpu: "conv on cpu", gpu: "conv on gpu" });
    if (mode === "registerHooks") {
      // require.resolve() names the file, as without the loader, so the deletion drops the module
      // itself: required again, it is a new instance, which gets its epilogue (load() is attached
      // again) and signals, so the registry's registration lands on its new table too.
      expect(out).toMatchObject({ cjs: "conv on cjs", fresh: true, afterDelete: "late on cjs", problems: [] });
      expect(result.stderr).toContain("ok: every registration landed");
    } else {
      // module.register hooks (Node 20, 22 before 22.22.3) never see require(): the CommonJS backend is reported, not passed over.
      expect(out).toMatchObject({ cjs: "ERR_DISPATCH_NO_IMPL" });
      expect(result.stderr).toMatch(/table\.js was loaded with require\(\), which the register hooks of Node \d/);
    }
    expect(result.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|ENOENT|Cannot find module/);
    expect(result.code).toBe(0);
  });

  it("a CommonJS dispatch module out of require.cache (deleted, or its first require() threw), then imported: the new instance gets its registrations", async () => {
    const dir = makeTree({
      ...framework(),
      ...plugin(
        "kit-ops",
        { cjs: "./reg/cjs.cjs" },
        {
          "reg/cjs.cjs":
            'const { register } = require("dispatch-hook");\nconst { Conv } = require("../ops.cjs");\nregister("cjs", Conv, () => "conv on cjs");\n',
          "ops.cjs": "exports.Conv = class Conv {};\n",
        },
      ),
      "node_modules/tensorkit/backends/cjs/package.json": JSON.stringify({ type: "commonjs" }),
      // The first evaluation throws, after the table exists; every later one succeeds.
      "node_modules/tensorkit/backends/cjs/table.js":
        'const { Dispatcher } = require("dispatch-hook");\nexports.cjsTable = new Dispatcher({ name: "cjsTable", backend: "cjs" });\nglobalThis.evaluations = (globalThis.evaluations ?? 0) + 1;\nif (process.env.THROW_FIRST && globalThis.evaluations === 1) throw new Error("first evaluation fails");\n',
      "package.json": app(["kit-ops"]),
      "main.mjs": [
        'import { createRequire } from "node:module";',
        "const require = createRequire(import.meta.url);",
        'const { Conv } = require("kit-ops/ops.cjs");',
        "const call = (table) => { try { return table.resolve(new Conv())(); } catch (e) { return e.code; } };",
        "let first;",
        'try { first = call(require("tensorkit/backends/cjs/table.js").cjsTable); } catch (e) { first = e.message; }',
        'if (!process.env.THROW_FIRST) delete require.cache[require.resolve("tensorkit/backends/cjs/table.js")];',
        'const { cjsTable } = await import("tensorkit/backends/cjs/table.js");',
        'const { registry } = await import("dispatch-hook");',
        "console.log(JSON.stringify({ first, evaluations: globalThis.evaluations, imported: call(cjsTable), problems: registry.verify().problems.map((p) => p.kind) }));",
      ].join("\n"),
    });
    for (const env of [{}, { THROW_FIRST: "1" }]) {
      const out = lastJson((await run(dir, ["--import", loader, "main.mjs"], env)).stdout);
      expect(out.evaluations, JSON.stringify(env)).toBe(2);
      expect(out.imported, JSON.stringify(env)).toBe("conv on cjs");
      if (env.THROW_FIRST) expect(out.first).toBe("first evaluation fails");
      else if (mode === "registerHooks") expect(out.first).toBe("conv on cjs");
      if (mode === "registerHooks") expect(out.problems, JSON.stringify(env)).toEqual([]);
    }
  });

  it("a CommonJS dispatch module reached through import() loads as without the loader (it requires an ES module), and its registrations land", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/cjskit/package.json": JSON.stringify({
        name: "cjskit",
        dependencies: { "dispatch-hook": "*" },
        dispatchHook: { backends: { cpu: { module: "./cpu.js", export: "cpuTable" } } },
      }),
      "node_modules/cjskit/cpu.js": [
        'const { Dispatcher } = require("dispatch-hook");',
        "class Add {}",
        'exports.cpuTable = new Dispatcher({ backend: "cpu" });',
        'exports.cpuTable.register(Add, () => "add on cpu");',
        "exports.Add = Add;",
      ].join("\n"),
      ...plugin(
        "kit-ops",
        { cpu: "./reg/cpu.js" },
        {
          "reg/cpu.js":
            'import cpu from "cjskit/cpu.js";\nimport { Conv } from "../ops.js";\ncpu.cpuTable.register(Conv, () => "conv on cpu");\n',
        },
      ),
      "node_modules/kit-ops/ops.js": "export class Conv {}\n",
      "package.json": appJson({ type: "module", dependencies: { cjskit: "*", "kit-ops": "*", "dispatch-hook": "*" } }),
      "main.mjs": [
        'const { cpuTable, Add } = await import("cjskit/cpu.js");',
        'const { Conv } = await import("kit-ops/ops.js");',
        "const call = (type) => { try { return cpuTable.resolve(new type())(); } catch (e) { return e.code; } };",
        "console.log(JSON.stringify({ add: call(Add), conv: call(Conv) }));",
      ].join("\n"),
    });
    const plain = await run(dir, ["main.mjs"]);
    expect(lastJson(plain.stdout)).toEqual({ add: "add on cpu", conv: "ERR_DISPATCH_NO_IMPL" });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ add: "add on cpu", conv: "conv on cpu" });
    expect(result.code).toBe(0);
  });
});
