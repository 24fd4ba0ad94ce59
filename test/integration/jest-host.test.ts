/**
 * Jest as a host: Jest 29 runs modules in its own module registry, where Node's hooks never see
 * them. Fixture projects in both of Jest's modes (CommonJS, and ES modules through
 * --experimental-vm-modules), each with two test files (Jest gives every file a fresh module
 * registry): with `resolver: "dispatch-hook/jest"` the registrations land and the audit counts
 * them; without it they miss.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appJson, makeTree, repoRoot, run, type Tree } from "./fixture.js";

const jestBin = join(repoRoot, "node_modules/jest/bin/jest.js");

function project(mode: "commonjs" | "module"): Tree {
  const cjs = mode === "commonjs";
  const table = cjs
    ? 'const { Dispatcher } = require("dispatch-hook");\nclass Add {}\nconst cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });\ncpuTable.register(Add, () => "add");\nmodule.exports = { Add, cpuTable };\n'
    : 'import { Dispatcher } from "dispatch-hook";\nexport class Add {}\nexport const cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });\ncpuTable.register(Add, () => "add");\n';
  const ops = cjs ? "class Conv {}\nmodule.exports = { Conv };\n" : "export class Conv {}\n";
  const registration = cjs
    ? 'const { register } = require("dispatch-hook");\nconst { Conv } = require("../ops.js");\nregister("cpu", Conv, () => "conv on cpu");\n'
    : 'import { register } from "dispatch-hook";\nimport { Conv } from "../ops.js";\nregister("cpu", Conv, () => "conv on cpu");\n';
  const test = (name: string) =>
    [
      cjs
        ? 'const { cpuTable } = require("tensorkit/backends/cpu/table.js");'
        : 'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
      cjs ? 'const { Conv } = require("kit-ops/ops.js");' : 'import { Conv } from "kit-ops/ops.js";',
      cjs ? 'const { threadAudit } = require("dispatch-hook");' : 'import { threadAudit } from "dispatch-hook";',
      `test(${JSON.stringify(name)}, () => {`,
      '  expect(cpuTable.resolve(new Conv())()).toBe("conv on cpu");',
      "  const report = threadAudit();",
      '  expect(report.registrations.filter((r) => r.op === "Conv").map((r) => r.state)).toContain("applied");',
      "  expect(report.problems).toEqual([]);",
      "  expect(report.checked).toBeGreaterThanOrEqual(2);",
      "});",
    ].join("\n");
  const withBoom = `${table}function boom() {\n  throw new Error("boom");\n}\n${cjs ? "module.exports.boom = boom;\n" : "export { boom };\n"}`;
  const throwsAt = withBoom.split("\n").findIndex((line) => line.includes("throw new Error")) + 1;
  return {
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "node_modules/jest": { symlink: join(repoRoot, "node_modules/jest") },
    "node_modules/tensorkit/package.json": JSON.stringify({
      name: "tensorkit",
      type: mode,
      dependencies: { "dispatch-hook": "*" },
      dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
    }),
    // The dispatch module throws at line `throwsAt`, column 9: the stack trace must say so.
    "node_modules/tensorkit/backends/cpu/table.js": withBoom,
    "node_modules/kit-ops/package.json": JSON.stringify({
      name: "kit-ops",
      type: mode,
      dependencies: { tensorkit: "*", "dispatch-hook": "*" },
      dispatchHook: { registrations: { cpu: "./reg/cpu.js" }, expects: { cpu: ["Conv"] } },
    }),
    "node_modules/kit-ops/ops.js": ops,
    "node_modules/kit-ops/reg/cpu.js": registration,
    "package.json": appJson({ type: mode, dependencies: { tensorkit: "*", "kit-ops": "*", "dispatch-hook": "*" } }),
    "jest.config.json": JSON.stringify({ testEnvironment: "node", ...(cjs ? {} : { transform: {} }) }),
    "jest.resolver.json": JSON.stringify({ testEnvironment: "node", resolver: "dispatch-hook/jest", ...(cjs ? {} : { transform: {} }) }),
    "test/first.test.js": test("lands in the first file"),
    "test/second.test.js": test("lands again in the second file, which has a module registry of its own"),
    "test/trace.test.js": [
      cjs ? 'const { boom } = require("tensorkit/backends/cpu/table.js");' : 'import { boom } from "tensorkit/backends/cpu/table.js";',
      'test("a stack trace names the dispatch module\'s own file and line", () => {',
      "  let stack = '';",
      "  try { boom(); } catch (error) { stack = error.stack; }",
      `  expect(stack).toContain(${JSON.stringify(`backends/cpu/table.js:${throwsAt}:9`)});`,
      "});",
    ].join("\n"),
    // Asked before any dispatch module of gpu loaded: with the resolver, a host serves the worker, and gpu has not loaded.
    "test/early.test.js": [
      cjs ? 'const { registry } = require("dispatch-hook");' : 'import { registry } from "dispatch-hook";',
      'test("assertComplete() before the backend loads says why", () => {',
      '  let code = "passed";',
      '  try { registry.assertComplete({ backends: ["gpu"] }); } catch (error) { code = error.code; }',
      '  console.log("EARLY " + code);',
      "});",
    ].join("\n"),
    ...(cjs && {
      "test/reset.test.js": [
        'test("jest.resetModules() and jest.isolateModules(): the fresh table gets the registration for the fresh classes", () => {',
        '  const first = require("tensorkit/backends/cpu/table.js").cpuTable;',
        "  jest.resetModules();",
        '  const { cpuTable } = require("tensorkit/backends/cpu/table.js");',
        '  const { Conv } = require("kit-ops/ops.js");',
        "  expect(cpuTable).not.toBe(first);",
        '  expect(cpuTable.resolve(new Conv())()).toBe("conv on cpu");',
        "  jest.isolateModules(() => {",
        '    const isolated = require("tensorkit/backends/cpu/table.js").cpuTable;',
        '    expect(isolated.resolve(new (require("kit-ops/ops.js").Conv)())()).toBe("conv on cpu");',
        "  });",
        '  expect(require("dispatch-hook").threadAudit().problems).toEqual([]);',
        "});",
      ].join("\n"),
    }),
  };
}

async function jest(dir: string, mode: "commonjs" | "module", config: string) {
  const flags = mode === "module" ? ["--experimental-vm-modules", "--no-warnings"] : [];
  const result = await run(dir, [...flags, jestBin, "--ci", "--no-cache", "--config", config], { NODE_OPTIONS: "" });
  return { ...result, output: result.stdout + result.stderr };
}

describe("dispatch-hook/jest", () => {
  for (const mode of ["commonjs", "module"] as const) {
    it(`${mode === "commonjs" ? "CommonJS mode" : "ES module mode (--experimental-vm-modules)"}: lands with the resolver, misses without`, async () => {
      const dir = makeTree(project(mode));
      // CommonJS mode adds a file that resets Jest's module registry (ES modules are not reset).
      const files = mode === "commonjs" ? 5 : 4;
      const withResolver = await jest(dir, mode, "jest.resolver.json");
      expect(withResolver.output).toMatch(new RegExp(`Tests:\\s+${files} passed, ${files} total`));
      expect(withResolver.output).toContain("EARLY ERR_DISPATCH_INCOMPLETE");
      expect(withResolver.code).toBe(0);
      const without = await jest(dir, mode, "jest.config.json");
      expect(without.output).toContain("ERR_DISPATCH_NO_IMPL");
      expect(without.output).toContain("EARLY ERR_DISPATCH_NO_LOADER");
      // The miss says what to add to this host, not to node.
      expect(without.output).toContain('Add "resolver": "dispatch-hook/jest" to the Jest config');
      expect(without.output).toMatch(new RegExp(`Tests:\\s+${files - 2} failed, 2 passed, ${files} total`));
    });
  }

  it("a JSON file that a declared pattern matches is left to Jest, as the loader leaves it to Node: its value, and require.resolve() naming the file", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/jest": { symlink: join(repoRoot, "node_modules/jest") },
      "package.json": appJson({ dispatchHook: { backends: { "*": { module: "./data/{backend}.json", export: "default" } } } }),
      "data/numba.json": '{ "table": true }\n',
      "jest.resolver.json": JSON.stringify({ testEnvironment: "node", resolver: "dispatch-hook/jest" }),
      "test/json.test.js": [
        'const path = require("node:path");',
        'test("the JSON file itself", () => {',
        '  expect(require("../data/numba.json")).toEqual({ table: true });',
        '  expect(require.resolve("../data/numba.json")).toBe(path.join(__dirname, "../data/numba.json"));',
        "});",
      ].join("\n"),
    });
    const result = await jest(dir, "commonjs", "jest.resolver.json");
    expect(result.output).toMatch(/Tests:\s+1 passed, 1 total/);
  });
});
