/**
 * Vitest as a host: fixture projects run with the repository's Vitest 4 in real processes. In each
 * setup, registrations land and the audit counts them with dispatch-hook/vite, and the same project
 * fails without it.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appJson, lastJson, makeTree, repoRoot, run, type Tree } from "./fixture.js";
import { nameKeyed } from "./trees.js";

const vitestBin = join(repoRoot, "node_modules/vitest/vitest.mjs");

/** A framework (tensorkit, cpu backend with a built-in Add) and a plugin (kit-ops, Conv), under `at`. */
function packages(at: (name: string) => string): Tree {
  return {
    [`${at("tensorkit")}/package.json`]: JSON.stringify({
      name: "tensorkit",
      type: "module",
      exports: { "./*": "./*" },
      dependencies: { "dispatch-hook": "*" },
      dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
    }),
    [`${at("tensorkit")}/backends/cpu/table.js`]:
      'import { Dispatcher } from "dispatch-hook";\nexport class Add {}\nexport const cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });\ncpuTable.register(Add, () => "add on cpu");\n',
    [`${at("kit-ops")}/package.json`]: JSON.stringify({
      name: "kit-ops",
      type: "module",
      exports: { "./*": "./*" },
      dependencies: { tensorkit: "*", "dispatch-hook": "*" },
      dispatchHook: { registrations: { cpu: "./reg/cpu.js" }, expects: { cpu: ["Conv"] } },
    }),
    [`${at("kit-ops")}/ops.js`]: "export class Conv {}\n",
    [`${at("kit-ops")}/reg/cpu.js`]:
      'import { register } from "dispatch-hook";\nimport { Conv } from "../ops.js";\nregister("cpu", Conv, () => "conv on cpu");\n',
  };
}

/** The app's package.json: it depends on the framework and the plugin, as an app does. */
const app = { name: "app", type: "module", dependencies: { tensorkit: "*", "kit-ops": "*", "dispatch-hook": "*" } };

const common: Tree = {
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  "node_modules/vitest": { symlink: join(repoRoot, "node_modules/vitest") },
  "node_modules/vite": { symlink: join(repoRoot, "node_modules/vite") },
};

const landedTest = (table: string) =>
  [
    'import { expect, test } from "vitest";',
    `import { cpuTable } from ${JSON.stringify(table)};`,
    'import { Conv } from "kit-ops/ops.js";',
    'import { threadAudit } from "dispatch-hook";',
    'test("Conv lands on cpu, and the audit counts it", () => {',
    '  expect(cpuTable.resolve(new Conv())()).toBe("conv on cpu");',
    "  const report = threadAudit();",
    '  expect(report.registrations.map((r) => r.op + ":" + r.state)).toContain("Conv:applied");',
    "  expect(report.problems).toEqual([]);",
    "});",
  ].join("\n");

function config(test: Record<string, unknown>, plugin: Record<string, unknown> = {}): string {
  return [
    'import { dispatchHook } from "dispatch-hook/vite";',
    "export default {",
    `  plugins: process.env.WITHOUT_PLUGIN ? [] : [dispatchHook(${JSON.stringify(plugin)})],`,
    `  test: ${JSON.stringify(test)},`,
    "};",
  ].join("\n");
}

async function vitest(dir: string, env: Record<string, string> = {}) {
  return run(dir, [vitestBin, "run"], { ...env, CI: "1", NO_COLOR: "1" });
}

/** Runs the project with the plugin (it must pass) and without it (it must fail). */
async function passesOnlyWithThePlugin(dir: string): Promise<void> {
  const withPlugin = await vitest(dir);
  expect(withPlugin.stdout + withPlugin.stderr).toMatch(/Tests\s+\d+ passed/);
  expect(withPlugin.code).toBe(0);
  const without = await vitest(dir, { WITHOUT_PLUGIN: "1" });
  expect(without.code).toBe(1);
  expect(without.stdout + without.stderr).toMatch(/ERR_DISPATCH_NO_IMPL|expected .* to contain 'Conv:applied'/);
}

describe("dispatch-hook/vite under Vitest", () => {
  it("the framework inlined (server.deps.inline)", async () => {
    const dir = makeTree({
      ...common,
      ...packages((name) => `node_modules/${name}`),
      "package.json": JSON.stringify(app),
      "vitest.config.mjs": config({ server: { deps: { inline: ["tensorkit"] } } }),
      "test/landed.test.mjs": landedTest("tensorkit/backends/cpu/table.js"),
    });
    await passesOnlyWithThePlugin(dir);
  });

  it("a framework that makes its tables up front, a plugin that registers for a backend the tests never load: strict passes (it failed, saying no loader was installed)", async () => {
    const dir = makeTree({
      ...common,
      "node_modules/tensorkit/package.json": JSON.stringify({
        name: "tensorkit",
        type: "module",
        exports: { ".": "./index.js", "./*": "./*" },
        dependencies: { "dispatch-hook": "*" },
        dispatchHook: { backends: { "*": { module: "./backends/{backend}.js", export: "table" } } },
      }),
      "node_modules/tensorkit/index.js":
        'import { Dispatcher } from "dispatch-hook";\nexport const tables = { cpu: new Dispatcher({ name: "cpu table", backend: "cpu" }), gpu: new Dispatcher({ name: "gpu table", backend: "gpu" }) };\n',
      "node_modules/tensorkit/backends/cpu.js": 'import { tables } from "../index.js";\nexport const table = tables.cpu;\n',
      "node_modules/tensorkit/backends/gpu.js": 'import { tables } from "../index.js";\nexport const table = tables.gpu;\n',
      "node_modules/kit-ops/package.json": JSON.stringify({
        name: "kit-ops",
        type: "module",
        exports: { ".": "./index.js" },
        dependencies: { "dispatch-hook": "*" },
      }),
      "node_modules/kit-ops/index.js":
        'import { register } from "dispatch-hook";\nexport class Conv {}\nregister("cpu", Conv, () => "conv on cpu");\nregister("gpu", Conv, () => "conv on gpu");\n',
      "package.json": JSON.stringify(app),
      "vitest.config.mjs": config({ server: { deps: { inline: ["tensorkit", "kit-ops"] } } }),
      "test/conv.test.mjs": [
        'import { expect, test } from "vitest";',
        'import { Conv } from "kit-ops";',
        'test("conv on cpu", async () => {',
        '  const { table } = await import("tensorkit/backends/cpu.js");',
        '  expect(table.resolve(new Conv())()).toBe("conv on cpu");',
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, { DISPATCH_HOOK_AUDIT: "strict" });
    expect(result.stdout + result.stderr).not.toContain("no-loader");
    expect(result.stdout + result.stderr).toMatch(/Tests\s+1 passed/);
    expect(result.code).toBe(0);
  });

  it("a table keyed by op name, inlined: the plugin's direct write lands, is audited as outside the registry, and counts for its expectation", async () => {
    const dir = makeTree({
      ...common,
      ...nameKeyed,
      "vitest.config.mjs": config({ server: { deps: { inline: ["namekit"] } } }),
      "test/landed.test.mjs": [
        'import { expect, test } from "vitest";',
        'import { cpuTable } from "namekit/cpu.js";',
        'import { threadAudit } from "dispatch-hook";',
        'test("Conv lands on cpu, written directly, and the audit counts it", () => {',
        '  expect(cpuTable.get("Conv")?.()).toBe("conv on cpu");',
        "  const report = threadAudit();",
        '  expect(report.outside.map((w) => w.op + " by " + w.plugin)).toEqual(["Conv by kit-ops"]);',
        "  expect(report.problems).toEqual([]);",
        "});",
      ].join("\n"),
    });
    const withPlugin = await vitest(dir);
    expect(withPlugin.stdout + withPlugin.stderr).toMatch(/Tests\s+1 passed/);
    expect(withPlugin.code).toBe(0);
    const without = await vitest(dir, { WITHOUT_PLUGIN: "1" });
    expect(without.code).toBe(1);
  });

  it("framework and plugin as workspace packages (inlined, because they live outside node_modules)", async () => {
    const dir = makeTree({
      ...common,
      ...packages((name) => `packages/${name}`),
      "node_modules/tensorkit": { symlink: "packages/tensorkit" },
      "node_modules/kit-ops": { symlink: "packages/kit-ops" },
      "package.json": JSON.stringify({ ...app, workspaces: ["packages/*"] }),
      "vitest.config.mjs": config({}),
      "test/landed.test.mjs": landedTest("tensorkit/backends/cpu/table.js"),
    });
    await passesOnlyWithThePlugin(dir);
  });

  it("the backend in the app's own source, declared in the app's package.json", async () => {
    const dir = makeTree({
      ...common,
      ...packages((name) => `node_modules/${name}`),
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { "kit-ops": "*" },
        dispatchHook: { backends: { cpu: { module: "./src/cpu.js", export: "cpuTable" } } },
      }),
      "src/cpu.js":
        'import { Dispatcher } from "dispatch-hook";\nexport const cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });\n',
      "vitest.config.mjs": config({}),
      "test/landed.test.mjs": landedTest("../src/cpu.js"),
    });
    await passesOnlyWithThePlugin(dir);
  });

  it("a transitive plugin (app → toolkit → framework + plugin), the framework inlined", async () => {
    const dir = makeTree({
      ...common,
      ...packages((name) => `node_modules/${name}`),
      "node_modules/toolkit/package.json": JSON.stringify({ name: "toolkit", dependencies: { tensorkit: "*", "kit-ops": "*" } }),
      "package.json": appJson({ type: "module", dependencies: { toolkit: "*", "dispatch-hook": "*" } }),
      "vitest.config.mjs": config({ server: { deps: { inline: ["tensorkit"] } } }),
      "test/landed.test.mjs": landedTest("tensorkit/backends/cpu/table.js"),
    });
    await passesOnlyWithThePlugin(dir);
  });

  for (const pool of ["threads", "vmThreads"]) {
    it(`pool ${pool}, the framework in node_modules and no loader: the plugin inlines the declared packages`, async () => {
      const dir = makeTree({
        ...common,
        ...packages((name) => `node_modules/${name}`),
        "package.json": JSON.stringify(app),
        "vitest.config.mjs": config({ pool }),
        "test/landed.test.mjs": landedTest("tensorkit/backends/cpu/table.js"),
      });
      await passesOnlyWithThePlugin(dir);
    });
  }

  it("pool vmThreads, a CommonJS framework that require()s dispatch-hook: its table is made and the plugin lands", async () => {
    const tree = packages((name) => `node_modules/${name}`);
    tree["node_modules/tensorkit/package.json"] = JSON.stringify({
      name: "tensorkit",
      exports: { "./*": "./*" },
      dependencies: { "dispatch-hook": "*" },
      dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.cjs", export: "{backend}Table" } } },
    });
    tree["node_modules/tensorkit/backends/cpu/table.cjs"] =
      'const { Dispatcher } = require("dispatch-hook");\nclass Add {}\nconst cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });\ncpuTable.register(Add, () => "add on cpu");\nmodule.exports = { Add, cpuTable };\n';
    const dir = makeTree({
      ...common,
      ...tree,
      "package.json": JSON.stringify(app),
      "vitest.config.mjs": config({ pool: "vmThreads" }),
      "test/landed.test.mjs": landedTest("tensorkit/backends/cpu/table.cjs"),
    });
    const result = await vitest(dir);
    expect(result.stdout + result.stderr).toMatch(/Tests\s+1 passed/);
    expect(result.code).toBe(0);
  });

  it("a CommonJS framework whose entry require()s its dispatch module: the plugin cannot land, and the reporter fails the run naming the table and the plugin (it said ok)", async () => {
    const tree = packages((name) => `node_modules/${name}`);
    tree["node_modules/tensorkit/package.json"] = JSON.stringify({
      name: "tensorkit",
      main: "index.js",
      dependencies: { "dispatch-hook": "*" },
      dispatchHook: { backends: { cpu: { module: "./backends/cpu/table.js", export: "cpuTable" } } },
    });
    tree["node_modules/tensorkit/index.js"] = 'module.exports = require("./backends/cpu/table.js");\n';
    tree["node_modules/tensorkit/backends/cpu/table.js"] =
      'const { Dispatcher } = require("dispatch-hook");\nexports.cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu", fallback: () => "generic" });\n';
    const dir = makeTree({
      ...common,
      ...tree,
      "package.json": JSON.stringify(app),
      "vitest.config.mjs": [
        'import { dispatchHook } from "dispatch-hook/vite";',
        'export default { plugins: [dispatchHook()], test: { pool: process.env.POOL, reporters: ["default", "dispatch-hook/vitest/reporter"] } };',
      ].join("\n"),
      "test/cjs.test.mjs": [
        'import { test } from "vitest";',
        'import { announce, Dispatcher, register } from "dispatch-hook";',
        'import kit from "tensorkit";',
        'import { Conv } from "kit-ops/ops.js";',
        "class Own {}",
        'test("uses the table", () => {',
        // Something else lands, so that the run checked something.
        '  announce("own", new Dispatcher({ name: "own", backend: "own" }));',
        '  register("own", Own, () => "own");',
        '  console.log("served:", kit.cpuTable.resolve(new Conv())());',
        "});",
      ].join("\n"),
    });
    for (const pool of ["forks", "threads"]) {
      const result = await run(dir, [vitestBin, "run"], { POOL: pool, CI: "1", NO_COLOR: "1" });
      expect(result.stdout).toContain("served: generic");
      expect(result.stdout).toMatch(/Tests\s+1 passed/);
      expect(result.stdout).toMatch(/cpu table \(Dispatcher "cpuTable"\) was made and used, but never reached dispatch-hook/);
      expect(result.stdout).toContain("kit-ops");
      expect(result.stdout).not.toMatch(/^ok:/m);
      expect(result.code).toBe(1);
    }
  });

  it("with { inline: false }, the framework stays external: Node's loader instruments it, the plugin leaves it alone, and it lands once", async () => {
    const dir = makeTree({
      ...common,
      ...packages((name) => `node_modules/${name}`),
      "package.json": JSON.stringify(app),
      "vitest.config.mjs": config({}, { inline: false }),
      "test/landed.test.mjs": [
        landedTest("tensorkit/backends/cpu/table.js"),
        'test("one registration, applied once, by the loader", () => {',
        '  const conv = threadAudit().registrations.filter((r) => r.op === "Conv");',
        "  expect(conv.map((r) => r.state)).toEqual(['applied']);",
        "  expect(threadAudit().notes.join(' ')).not.toContain('dispatch-hook/vite instrumented');",
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, { NODE_OPTIONS: `--import ${join(repoRoot, "loader.mjs")}` });
    expect(result.stdout + result.stderr).toMatch(/Tests\s+2 passed/);
    expect(result.code).toBe(0);
    // Without the loader, the external framework misses.
    const alone = await vitest(dir);
    expect(alone.code).toBe(1);
  });

  it("a stack trace through an inlined dispatch module points at its original file and line", async () => {
    const tree = { ...common, ...packages((name) => `node_modules/${name}`) };
    // Line 6 of the dispatch module throws, at column 9.
    tree["node_modules/tensorkit/backends/cpu/table.js"] += "export function boom() {\n  throw new Error('boom');\n}\n";
    const dir = makeTree({
      ...tree,
      "package.json": JSON.stringify(app),
      "vitest.config.mjs": config({ server: { deps: { inline: ["tensorkit"] } } }),
      "test/trace.test.mjs": [
        'import { expect, test } from "vitest";',
        'import { boom } from "tensorkit/backends/cpu/table.js";',
        'test("the frame names the original", () => {',
        "  let stack = '';",
        "  try { boom(); } catch (error) { stack = error.stack; }",
        "  console.log(stack);",
        // The file itself: no query of ours.
        "  expect(stack).toMatch(/tensorkit\\/backends\\/cpu\\/table\\.js:6:9/);",
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir);
    expect(result.stdout + result.stderr).toMatch(/Tests\s+1 passed/);
  });

  it("?raw, ?url, ?worker and ?inline imports of a dispatch module are what they are without the plugin; a plain import gets the facade", async () => {
    const dir = makeTree({
      ...common,
      ...packages((name) => `node_modules/${name}`),
      "package.json": JSON.stringify(app),
      "vitest.config.mjs": config({ server: { deps: { inline: ["tensorkit"] } } }),
      "test/queries.test.mjs": [
        'import { expect, test } from "vitest";',
        'import * as raw from "tensorkit/backends/cpu/table.js?raw";',
        'import * as url from "tensorkit/backends/cpu/table.js?url";',
        'import * as worker from "tensorkit/backends/cpu/table.js?worker";',
        'import * as inline from "tensorkit/backends/cpu/table.js?inline";',
        'import * as plain from "tensorkit/backends/cpu/table.js";',
        'import { Conv } from "kit-ops/ops.js";',
        "const show = (ns) => Object.fromEntries(Object.keys(ns).sort().map((k) => [k, typeof ns[k] === 'object' ? typeof ns[k] : String(ns[k])]));",
        'test("each query import, and the plain one", () => {',
        "  let landed; try { landed = plain.cpuTable.resolve(new Conv())(); } catch (e) { landed = e.code; }",
        "  const inlineIsOwn = inline.cpuTable !== plain.cpuTable;",
        "  console.log(JSON.stringify({ raw: show(raw), url: show(url), worker: show(worker), inline: show(inline), inlineIsOwn, landed }));",
        "});",
      ].join("\n"),
    });
    const withPlugin = await vitest(dir);
    expect(withPlugin.stdout + withPlugin.stderr).toMatch(/Tests\s+1 passed/);
    const without = await vitest(dir, { WITHOUT_PLUGIN: "1" });
    const { landed, ...queries } = lastJson(withPlugin.stdout);
    const { landed: missed, ...plainQueries } = lastJson(without.stdout);
    expect(queries).toEqual(plainQueries);
    expect((queries.raw as Record<string, string>).default).toContain("export const cpuTable");
    expect(landed).toBe("conv on cpu");
    expect(missed).toBe("ERR_DISPATCH_NO_IMPL");
  });

  for (const pool of ["threads", "forks", "vmThreads", "vmForks"]) {
    for (const isolate of [true, false]) {
      it(`pool ${pool}, isolate ${isolate}, the framework inlined`, async () => {
        const dir = makeTree({
          ...common,
          ...packages((name) => `node_modules/${name}`),
          "package.json": JSON.stringify(app),
          "vitest.config.mjs": config({ pool, isolate, server: { deps: { inline: ["tensorkit"] } } }),
          "test/landed.test.mjs": landedTest("tensorkit/backends/cpu/table.js"),
          "test/again.test.mjs": landedTest("tensorkit/backends/cpu/table.js"),
        });
        const result = await vitest(dir);
        expect(result.stdout + result.stderr).toMatch(/Tests\s+2 passed/);
        expect(result.code).toBe(0);
      });
    }
  }

  // Each file in a vm context of its own. (With one worker, Vitest 4.1 runs every file of the pool in one
  // vm context, vitest-dev/vitest#10743: modules and globals outlive a file there, ours too; documented.)
  for (const pool of ["vmThreads", "vmForks"]) {
    it(`pool ${pool}, two workers: a file's top-level registration stays in its file, and the plugin's lands in each, as the plugin's`, async () => {
      const file = (name: string) =>
        [
          'import { expect, test } from "vitest";',
          'import { register, threadAudit } from "dispatch-hook";',
          'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
          'import { Scale } from "../src/ops.js";',
          'import { Conv } from "kit-ops/ops.js";',
          "let before = 'none';",
          "try { before = cpuTable.resolve(new Scale())(); } catch {}",
          `register("cpu", Scale, () => ${JSON.stringify(name)});`,
          `test("${name} sees only its own registration", () => {`,
          '  expect(before).toBe("none");',
          '  expect(cpuTable.resolve(new Conv())()).toBe("conv on cpu");',
          '  expect(threadAudit().registrations.find((r) => r.op === "Conv")?.origin?.plugin).toBe("kit-ops");',
          `  expect(cpuTable.resolve(new Scale())()).toBe(${JSON.stringify(name)});`,
          '  expect(threadAudit().registrations.filter((r) => r.op === "Scale" && r.state === "applied")).toHaveLength(1);',
          "});",
        ].join("\n");
      const dir = makeTree({
        ...common,
        ...packages((name) => `node_modules/${name}`),
        "package.json": JSON.stringify(app),
        "vitest.config.mjs": config({ pool, maxWorkers: 2 }),
        "src/ops.js": "export class Scale {}\n",
        "test/a.test.mjs": file("a"),
        "test/b.test.mjs": file("b"),
      });
      const result = await vitest(dir);
      expect(result.stdout + result.stderr).toMatch(/Tests\s+2 passed/);
      expect(result.code).toBe(0);
    });
  }

  it("the plugin inlined and the framework left to Node: the miss says the class is a second copy, and the audit marks it", async () => {
    const dir = makeTree({
      ...common,
      ...packages((name) => `node_modules/${name}`),
      "package.json": JSON.stringify(app),
      // Only the plugin inlined, by hand; the framework stays external ({ inline: false }).
      "vitest.config.mjs": config({ server: { deps: { inline: ["kit-ops"] } } }, { inline: false }),
      "test/landed.test.mjs": [
        'import { expect, test } from "vitest";',
        'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
        'import { Conv } from "kit-ops/ops.js";',
        'import { threadAudit } from "dispatch-hook";',
        'test("the miss tells the truth", () => {',
        "  let message = '';",
        "  try { cpuTable.resolve(new Conv()); } catch (e) { message = e.message; }",
        '  expect(message).toContain("second copy of that class");',
        '  expect(threadAudit().problems.map((p) => p.kind)).toContain("identity");',
        "});",
      ].join("\n"),
    });
    // Node's loader handles the externalized framework and runs the plugin's registration module in Node.
    const result = await vitest(dir, { NODE_OPTIONS: `--import ${join(repoRoot, "loader.mjs")}` });
    expect(result.stdout + result.stderr).toMatch(/Tests\s+1 passed/);
  });
});
