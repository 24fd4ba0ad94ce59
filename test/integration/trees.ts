/** Fixture trees shaped like the real thing: a framework with lazily loaded backends, and a plugin. */
import { join } from "node:path";
import { appJson, repoRoot, type Tree } from "./fixture.js";

export const frameworkEsm: Tree = {
  "node_modules/tensorlab/package.json": JSON.stringify({
    name: "tensorlab",
    type: "module",
    exports: { ".": "./index.js", "./link/*": "./link/*" },
    dispatchHook: { backends: { "*": { module: "./link/{backend}/dispatch/basic.js", export: "{backend}Funcify" } } },
  }),
  "node_modules/tensorlab/index.js": "export class Op {}\n",
  "node_modules/tensorlab/link/numba/dispatch/basic.js": [
    'import { Dispatcher } from "dispatch-hook";',
    'export const numbaFuncify = new Dispatcher({ name: "numbaFuncify", backend: "numba" });',
    "",
  ].join("\n"),
  "node_modules/tensorlab/link/jax/dispatch/basic.js": [
    'import { Dispatcher } from "dispatch-hook";',
    'export const jaxFuncify = new Dispatcher({ name: "jaxFuncify", backend: "jax" });',
    "",
  ].join("\n"),
};

/** A CommonJS framework with its own register()-shaped tables (it does not depend on dispatch-hook). */
export const frameworkCjs: Tree = {
  "node_modules/tensorlab-cjs/package.json": JSON.stringify({
    name: "tensorlab-cjs",
    type: "commonjs",
    dispatchHook: { backends: { "*": { module: "./link/{backend}/dispatch/basic.js", export: "{backend}Funcify" } } },
  }),
  "node_modules/tensorlab-cjs/table.js": [
    "class Table {",
    "  constructor(name) { this.name = name; this.entries = new Map(); }",
    "  register(type, fn) { this.entries.set(type, fn); }",
    "  unregister(type) { this.entries.delete(type); }",
    "  get(type) { return this.entries.get(type); }",
    "}",
    "module.exports = { Table };",
    "",
  ].join("\n"),
  "node_modules/tensorlab-cjs/link/numba/dispatch/basic.js": [
    'const { Table } = require("../../../table.js");',
    'exports.numbaFuncify = new Table("numba");',
    "",
  ].join("\n"),
};

/**
 * The plugin: an op type and an explicit registration module; when `declared`, also a declared
 * registration module for numba (the package.json field that the loader finds wherever the plugin
 * sits in the tree). Undeclared, only the explicit route registers.
 */
export function plugin(framework: "tensorlab" | "tensorlab-cjs", declared: boolean): Tree {
  return {
    "node_modules/ml-ops/package.json": JSON.stringify({
      name: "ml-ops",
      type: "module",
      exports: { ".": "./index.js", "./*": "./*" },
      ...(declared ? { dispatchHook: { registrations: { numba: "./dispatch/numba.js" }, expects: { numba: ["PoolLayer"] } } } : {}),
    }),
    "node_modules/ml-ops/index.js": "export class PoolLayer {}\nexport const poolNumba = () => 'pooled';\n",
    "node_modules/ml-ops/dispatch/numba.js": [
      'import { register } from "dispatch-hook";',
      'import { PoolLayer, poolNumba } from "../index.js";',
      'register("numba", PoolLayer, poolNumba);',
      "",
    ].join("\n"),
    "node_modules/ml-ops/register-now.js": [
      'import { register } from "dispatch-hook";',
      'import { PoolLayer, poolNumba } from "./index.js";',
      'register("numba", PoolLayer, poolNumba);',
      "",
    ].join("\n"),
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "package.json": JSON.stringify({
      name: "app",
      type: "module",
      dependencies: { [framework]: "*", "dispatch-hook": "*", ...(declared ? { "ml-ops": "*" } : {}) },
    }),
  };
}

/**
 * A framework whose cpu table is a Map keyed by op name (holding "Add"), and a plugin whose
 * registration module writes "Conv" into it directly and expects both.
 */
export const nameKeyed: Tree = {
  "node_modules/namekit/package.json": JSON.stringify({
    name: "namekit",
    type: "module",
    exports: { "./*": "./*" },
    dispatchHook: { backends: { cpu: { module: "./cpu.js", export: "cpuTable" } } },
  }),
  "node_modules/namekit/cpu.js": 'export const cpuTable = new Map([["Add", () => "add on cpu"]]);\n',
  "node_modules/kit-ops/package.json": JSON.stringify({
    name: "kit-ops",
    type: "module",
    exports: { "./*": "./*" },
    dependencies: { namekit: "*" },
    dispatchHook: { registrations: { cpu: "./reg/cpu.js" }, expects: { cpu: ["Conv", "Add"] } },
  }),
  "node_modules/kit-ops/reg/cpu.js": 'import { cpuTable } from "namekit/cpu.js";\ncpuTable.set("Conv", () => "conv on cpu");\n',
  "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { namekit: "*", "kit-ops": "*", "dispatch-hook": "*" } }),
};

const otherLoaders: Tree = {
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  "node_modules/tsx": { symlink: join(repoRoot, "node_modules/tsx") },
  "node_modules/import-in-the-middle": { symlink: join(repoRoot, "node_modules/import-in-the-middle") },
};

/**
 * A TypeScript framework (tensorts) and plugin (ts-ops) as workspace packages: node_modules holds
 * symlinks to packages/, so their real paths are outside node_modules, where Node's type stripping
 * applies. cpu is a .ts dispatch module (with a default export), gpu a .mts and tpu a .cts one;
 * ts-ops has a registration module for each, of the same kind (cpu's registers, gpu's writes into
 * the table, tpu's is CommonJS). npu (.ts) has no registration module: the app registers for it.
 */
export const typescriptWorkspace: Tree = {
  ...otherLoaders,
  "node_modules/tensorts": { symlink: "packages/tensorts" },
  "node_modules/ts-ops": { symlink: "packages/ts-ops" },
  "packages/tensorts/package.json": JSON.stringify({
    name: "tensorts",
    type: "module",
    exports: { "./*": "./*" },
    dependencies: { "dispatch-hook": "*" },
    dispatchHook: {
      backends: {
        cpu: { module: "./backends/cpu.ts", export: "cpuTable" },
        gpu: { module: "./backends/gpu.mts", export: "gpuTable" },
        tpu: { module: "./backends/tpu.cts", export: "tpuTable" },
        npu: { module: "./backends/npu.ts", export: "npuTable" },
      },
    },
  }),
  "packages/tensorts/backends/cpu.ts": [
    'import { Dispatcher } from "dispatch-hook";',
    'export const cpuTable: Dispatcher = new Dispatcher({ name: "cpuTable", backend: "cpu" });',
    "export default cpuTable;",
    "",
  ].join("\n"),
  "packages/tensorts/backends/gpu.mts": [
    'import { Dispatcher } from "dispatch-hook";',
    'export const gpuTable: Dispatcher = new Dispatcher({ name: "gpuTable", backend: "gpu" });',
    "",
  ].join("\n"),
  "packages/tensorts/backends/tpu.cts": [
    'const { Dispatcher } = require("dispatch-hook");',
    "interface Table { register(type: unknown, impl: unknown): void }",
    'const tpuTable: Table = new Dispatcher({ name: "tpuTable", backend: "tpu" });',
    "exports.tpuTable = tpuTable;",
    "",
  ].join("\n"),
  "packages/tensorts/backends/npu.ts": [
    'import { Dispatcher } from "dispatch-hook";',
    'export const npuTable: Dispatcher = new Dispatcher({ name: "npuTable", backend: "npu" });',
    "",
  ].join("\n"),
  "packages/ts-ops/package.json": JSON.stringify({
    name: "ts-ops",
    type: "module",
    exports: { "./*": "./*" },
    dependencies: { tensorts: "*", "dispatch-hook": "*" },
    dispatchHook: {
      registrations: { cpu: "./reg/cpu.ts", gpu: "./reg/gpu.mts", tpu: "./reg/tpu.cts" },
      expects: { cpu: ["Conv"], gpu: ["Conv"], tpu: ["Conv"] },
    },
  }),
  "packages/ts-ops/ops.cts": 'class Conv {\n  readonly kind: string = "conv";\n}\nmodule.exports = { Conv };\n',
  "packages/ts-ops/reg/cpu.ts": [
    'import { register } from "dispatch-hook";',
    'import { Conv } from "../ops.cts";',
    'const convOnCpu = (op: Conv): string => op.kind + " on cpu";',
    'register("cpu", Conv, convOnCpu);',
    "",
  ].join("\n"),
  "packages/ts-ops/reg/gpu.mts": [
    'import { gpuTable } from "tensorts/backends/gpu.mts";',
    'import { Conv } from "../ops.cts";',
    'gpuTable.register(Conv, (op: Conv): string => op.kind + " on gpu");',
    "",
  ].join("\n"),
  "packages/ts-ops/reg/tpu.cts": [
    'const { register } = require("dispatch-hook");',
    'const { Conv } = require("../ops.cts");',
    'register("tpu", Conv, (op: { kind: string }): string => op.kind + " on tpu");',
    "",
  ].join("\n"),
  "package.json": appJson({ type: "module", dependencies: { tensorts: "*", "ts-ops": "*", "dispatch-hook": "*" } }),
  // The app: registers for npu itself, loads every backend, and prints what each table answers.
  "main.ts": [
    'import { createRequire } from "node:module";',
    'import { register, registry } from "dispatch-hook";',
    'import { Conv } from "ts-ops/ops.cts";',
    'register("npu", Conv, (op: Conv): string => op.kind + " on npu");',
    "interface Table { resolve(op: unknown): (op: unknown) => string }",
    "const tables: Record<string, Table> = {",
    '  cpu: (await import("tensorts/backends/cpu.ts")).default,',
    '  gpu: (await import("tensorts/backends/gpu.mts")).gpuTable,',
    '  tpu: (await import("tensorts/backends/tpu.cts")).tpuTable,',
    '  npu: (await import("tensorts/backends/npu.ts")).npuTable,',
    "};",
    "const conv = new Conv();",
    "const answers: Record<string, string> = {};",
    "for (const [backend, table] of Object.entries(tables)) {",
    "  try { answers[backend] = table.resolve(conv)(conv); } catch (error) { answers[backend] = String((error as { code?: string }).code ?? error); }",
    "}",
    "// require() of the CommonJS backend (its CommonJS facade where the hooks see require()) gets the same table.",
    'const required = createRequire(import.meta.url)("tensorts/backends/tpu.cts").tpuTable === tables.tpu;',
    "const report = registry.verify();",
    "console.log(JSON.stringify({ answers, required, ok: report.ok, checked: report.checked > 0, problems: report.problems.map((p) => p.message) }));",
    "",
  ].join("\n"),
};

// import-in-the-middle wraps every module it is not told to exclude, ours and the generated ones
// included; addHook hears each module it wrapped.
export const iitmApp: Tree = {
  ...otherLoaders,
  ...frameworkEsm,
  ...frameworkCjs,
  ...plugin("tensorlab", true),
  "package.json": appJson({
    type: "module",
    dependencies: { tensorlab: "*", "tensorlab-cjs": "*", "ml-ops": "*", "dispatch-hook": "*", "import-in-the-middle": "*" },
  }),
  "iitm.mjs": ['import { register } from "node:module";', 'register("import-in-the-middle/hook.mjs", import.meta.url);', ""].join("\n"),
  "main.mjs": [
    'import { addHook } from "import-in-the-middle";',
    'import { register, registry } from "dispatch-hook";',
    'import { PoolLayer } from "ml-ops";',
    "const wrapped = [];",
    "addHook((url) => { wrapped.push(url); });",
    'register("jax", PoolLayer, () => "pooled on jax");',
    'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
    'const { jaxFuncify } = await import("tensorlab/link/jax/dispatch/basic.js");',
    'const cjs = await import("tensorlab-cjs/link/numba/dispatch/basic.js");',
    "const op = new PoolLayer();",
    "const answer = (f) => { try { return f(); } catch (error) { return String(error.code ?? error); } };",
    "const report = registry.verify();",
    "console.log(JSON.stringify({",
    "  numba: answer(() => numbaFuncify.resolve(op)()),",
    "  jax: answer(() => jaxFuncify.resolve(op)()),",
    "  cjs: answer(() => cjs.numbaFuncify.get(PoolLayer)()),",
    '  iitmSawNumba: wrapped.some((u) => u.includes("tensorlab/link/numba/dispatch/basic.js")),',
    "  ok: report.ok,",
    "  problems: report.problems.map((p) => p.message),",
    "}));",
    "",
  ].join("\n"),
};

/**
 * A framework whose package has no "type", its dispatch module a .js file in ES module syntax (Node
 * 22+ reads its syntax), and a plugin that registers Pool on cpu.
 */
export const typelessEsmFramework: Tree = {
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  "node_modules/esk/package.json": JSON.stringify({
    name: "esk",
    exports: { "./*": "./*" },
    dispatchHook: { backends: { "*": { module: "./backends/{backend}.js", export: "table" } } },
  }),
  "node_modules/esk/backends/cpu.js":
    'import { Dispatcher } from "dispatch-hook";\nexport const table = new Dispatcher({ name: "cpu table", backend: "cpu" });\n',
  "node_modules/esk-ops/package.json": JSON.stringify({
    name: "esk-ops",
    type: "module",
    exports: { "./*": "./*" },
    dispatchHook: { registrations: { cpu: "./cpu.js" }, expects: { cpu: ["Pool"] } },
  }),
  "node_modules/esk-ops/cpu.js": 'import { register } from "dispatch-hook";\nexport class Pool {}\nregister("cpu", Pool, () => "pool");\n',
  "package.json": JSON.stringify({ name: "app", dependencies: { esk: "*", "esk-ops": "*", "dispatch-hook": "*" } }),
};
