/**
 * Ours stays invisible under the loader: what a program learns about a watched dispatch module's
 * file is what it learns without the loader. The importer's `import.meta.resolve()` and
 * `require.resolve()` of the module, the module's own `import.meta` (url, filename, dirname,
 * resolve), `__filename` and `require.resolve()`, and the frames of a throw inside it (with and
 * without `--enable-source-maps`) are compared, run by run, with the same program run without the
 * loader; only the registration differs (it lands with the loader).
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { lastJson, loader, makeTree, nodeBinary, nodeVersion, run, type Tree } from "./fixture.js";
import { frameworkCjs, frameworkEsm, plugin } from "./trees.js";

const requireModule =
  execFileSync(nodeBinary, ["-p", "process.features.require_module === true"], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  }).trim() === "true";

const inThread = hookMode(nodeVersion) === "registerHooks";

// Line 6, column 9 throws; the map sends line 6 to basic.ts line 11.
const boom = ["export function boom() {", '  throw new Error("boom");', "}"];
const map = JSON.stringify({ version: 3, sources: ["basic.ts"], names: [], mappings: ";;;;;EAUI" });

const esm: Tree = {
  ...frameworkEsm,
  ...plugin("tensorlab", true),
  "node_modules/tensorlab/link/numba/dispatch/basic.js": [
    'import { Dispatcher } from "dispatch-hook";',
    'export const numbaFuncify = new Dispatcher({ name: "numbaFuncify", backend: "numba" });',
    "export const inside = () => ({ url: import.meta.url, filename: import.meta.filename, dirname: import.meta.dirname,",
    '  self: import.meta.resolve("./basic.js"), framework: import.meta.resolve("tensorlab/link/numba/dispatch/basic.js") });',
    ...boom.slice(0, 2),
    `${boom[2]}`,
    "//# sourceMappingURL=basic.js.map",
    "",
  ].join("\n"),
  "node_modules/tensorlab/link/numba/dispatch/basic.js.map": map,
  "main.mjs": [
    'import { createRequire } from "node:module";',
    'const spec = "tensorlab/link/numba/dispatch/basic.js";',
    "const frame = (f) => { try { f(); } catch (e) { return e.stack.split('\\n')[1].trim(); } };",
    "const m = await import(spec);",
    // A second instance of the module, with a query of its own.
    'const copy = await import(import.meta.resolve(spec) + "?copy=2");',
    'const { PoolLayer } = await import("ml-ops");',
    "let landed; try { landed = m.numbaFuncify.resolve(new PoolLayer())(); } catch (e) { landed = e.code; }",
    "console.log(JSON.stringify({",
    "  resolved: import.meta.resolve(spec), required: createRequire(import.meta.url).resolve(spec),",
    "  inside: m.inside(), copy: copy.inside(), frame: frame(m.boom), copyFrame: frame(copy.boom), landed,",
    "}));",
  ].join("\n"),
};

const cjs: Tree = {
  ...frameworkCjs,
  ...plugin("tensorlab-cjs", true),
  "node_modules/tensorlab-cjs/link/numba/dispatch/basic.js": [
    'const { Table } = require("../../../table.js");',
    'exports.numbaFuncify = new Table("numba");',
    "exports.inside = () => ({ filename: __filename, dirname: __dirname, id: module.id, self: require.resolve('./basic.js') });",
    "exports.boom = boom;",
    ...boom.slice(0, 2).map((line) => line.replace("export ", "")),
    `${boom[2]}`,
    "",
  ].join("\n"),
  // A CommonJS importer, and an ES one.
  "main.cjs": [
    'const spec = "tensorlab-cjs/link/numba/dispatch/basic.js";',
    "const frame = (f) => { try { f(); } catch (e) { return e.stack.split('\\n')[1].trim(); } };",
    "const m = require(spec);",
    'const { PoolLayer } = require("ml-ops");',
    "console.log(JSON.stringify({ required: require.resolve(spec), inside: m.inside(), frame: frame(m.boom), landed: m.numbaFuncify.get(PoolLayer)?.() ?? null }));",
  ].join("\n"),
  "main.mjs": [
    'import { createRequire } from "node:module";',
    'const spec = "tensorlab-cjs/link/numba/dispatch/basic.js";',
    "const frame = (f) => { try { f(); } catch (e) { return e.stack.split('\\n')[1].trim(); } };",
    "const m = await import(spec);",
    'const { PoolLayer } = await import("ml-ops");',
    "console.log(JSON.stringify({",
    "  resolved: import.meta.resolve(spec), required: createRequire(import.meta.url).resolve(spec),",
    "  inside: m.inside(), frame: frame(m.boom), landed: m.numbaFuncify.get(PoolLayer)?.() ?? null,",
    "}));",
  ].join("\n"),
};

/** The program's answers with and without the loader, and with and without source maps. */
async function compare(dir: string, main: string, landed: unknown) {
  for (const maps of [[], ["--enable-source-maps"]]) {
    const plain = await run(dir, [...maps, main]);
    const hooked = await run(dir, [...maps, "--import", loader, main]);
    expect(hooked.stderr).toBe("");
    const { landed: was, ...without } = lastJson(plain.stdout);
    const { landed: is, ...withLoader } = lastJson(hooked.stdout);
    expect(withLoader).toEqual(without);
    expect(is).toBe(landed);
    if (landed !== null) expect(was).not.toBe(landed);
  }
}

describe("ours stays invisible: resolution, import.meta, __filename and stack traces name the real file", () => {
  it("an ES dispatch module with a plugin, and a second instance of it (a query)", async () => {
    const dir = makeTree(esm);
    await compare(dir, "main.mjs", "pooled");
    // The answers themselves name the file (not only agree with a run without the loader).
    const { resolved, inside, frame } = lastJson((await run(dir, ["--import", loader, "main.mjs"])).stdout);
    expect(resolved).toMatch(/\/tensorlab\/link\/numba\/dispatch\/basic\.js$/);
    expect((inside as { url: string }).url).toBe(resolved);
    expect(frame).toMatch(/\/basic\.js:6:9\)$/);
  });

  it("a CommonJS dispatch module with a plugin, imported", async () => {
    await compare(makeTree(cjs), "main.mjs", "pooled");
  });

  // main.cjs require()s the plugin, an ES package: that needs require(esm), which Node 20.16 lacks.
  it.skipIf(!requireModule)("a CommonJS dispatch module with a plugin, required (needs require(esm), absent on this Node)", async () => {
    // require() is seen by the in-thread hooks only: the Node 20 hooks leave it to Node.
    await compare(makeTree(cjs), "main.cjs", inThread ? "pooled" : null);
  });
});
