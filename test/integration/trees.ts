/** Fixture trees shaped like the real thing: a framework with lazily loaded backends, and a plugin. */
import type { Tree } from "./fixture.js";

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
