/**
 * esbuild as a host: the tensorlab + ml-ops example bundled for node, once into one file and once with
 * code splitting (each backend's dispatch module in a lazily loaded chunk). The bundle is copied to a
 * directory with no node_modules and run with plain node, no --import: the registrations land, the
 * thread's audit counts all sixteen, and stack traces point at the original files. Without the
 * plugin the same bundle misses.
 */
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lastJson, makeTree, repoRoot, run } from "./fixture.js";
import { frameworkEsm, plugin } from "./trees.js";

const examples = join(repoRoot, "examples");

function project(): string {
  return makeTree({
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "node_modules/esbuild": { symlink: join(repoRoot, "node_modules/esbuild") },
    "node_modules/tensorlab": { symlink: join(examples, "tensorlab") },
    "node_modules/ml-ops": { symlink: join(examples, "ml-ops") },
    "package.json": JSON.stringify({
      name: "bundled-app",
      type: "module",
      dependencies: { tensorlab: "*", "ml-ops": "*", "dispatch-hook": "*" },
    }),
    "workload.js": readFileSync(join(examples, "ordering-bug/workload.js"), "utf8"),
    "main.mjs": [
      'import { formatReport, threadAudit } from "dispatch-hook";',
      'import { backends, compile } from "tensorlab";',
      'import { graph, inputs, matchesReference } from "./workload.js";',
      "const results = {};",
      "for (const backend of backends) {",
      "  try {",
      "    results[backend] = matchesReference((await compile(graph, { backend }))(inputs));",
      "  } catch (error) {",
      "    results[backend] = error.code ?? error.message;",
      "  }",
      "}",
      "const report = threadAudit();",
      "console.log(formatReport(report));",
      "console.log(JSON.stringify({",
      "  results,",
      '  applied: report.registrations.filter((r) => r.state === "applied").length,',
      "  problems: report.problems.map((p) => p.kind),",
      "  ok: report.ok,",
      "  checked: report.checked,",
      "}));",
    ].join("\n"),
    // The stack-trace check: a kernel that throws, from the original file and line.
    "trace.mjs": [
      'import { compile } from "tensorlab";',
      'import { Graph, Tensor } from "tensorlab";',
      'import { PoolLayer } from "ml-ops";',
      "const graph = new Graph();",
      'graph.output(graph.apply(new PoolLayer({ kernel: 2, stride: 2, padding: 0 }), graph.input("x")));',
      'const run = await compile(graph, { backend: "numba" });',
      "try { run({ x: { shape: null } }); } catch (error) { console.log(error.stack); }",
    ].join("\n"),
    "build.mjs": [
      'import { build } from "esbuild";',
      'import { dispatchHook } from "dispatch-hook/esbuild";',
      "const splitting = process.argv.includes('--splitting');",
      "await build({",
      '  entryPoints: ["main.mjs", "trace.mjs"],',
      "  bundle: true,",
      '  platform: "node",',
      '  format: "esm",',
      "  splitting,",
      '  outdir: "out",',
      "  sourcemap: true,",
      '  logLevel: "error",',
      "  plugins: process.env.WITHOUT_PLUGIN ? [] : [dispatchHook(process.env.GHOST ? { plugins: [{ name: 'ghost-ops', expects: { numba: ['GhostOp'] } }] } : {})],",
      "});",
    ].join("\n"),
  });
}

/** Builds, copies the output where nothing can be resolved, and runs it with plain node. */
async function bundleAndRun(dir: string, options: { splitting?: boolean; withoutPlugin?: boolean; ghost?: boolean } = {}) {
  const built = await run(dir, ["build.mjs", ...(options.splitting ? ["--splitting"] : [])], {
    ...(options.withoutPlugin ? { WITHOUT_PLUGIN: "1" } : {}),
    ...(options.ghost ? { GHOST: "1" } : {}),
  });
  expect(built.stderr).toBe("");
  expect(built.code).toBe(0);
  const away = makeTree({});
  cpSync(join(dir, "out"), away, { recursive: true });
  // ES module output: Node 20.16 does not detect module syntax in a .js file without this.
  writeFileSync(join(away, "package.json"), JSON.stringify({ type: "module" }));
  const main = await run(away, [join(away, "main.js")], { NODE_OPTIONS: "" });
  const trace = await run(away, ["--enable-source-maps", join(away, "trace.js")], { NODE_OPTIONS: "" });
  return { main, trace, away };
}

describe("dispatch-hook/esbuild", () => {
  for (const splitting of [false, true]) {
    it(`a bundle${splitting ? " with code splitting" : ""} runs with plain node: registrations land and the audit counts them`, async () => {
      const dir = project();
      const { main, trace, away } = await bundleAndRun(dir, { splitting });
      expect(main.stderr).toBe("");
      const summary = lastJson(main.stdout);
      expect(summary.results).toEqual({ numba: true, jax: true, mlx: true, pytorch: true });
      expect(summary.applied).toBe(16);
      expect(summary.problems).toEqual([]);
      expect(summary.ok).toBe(true);
      // Sixteen registrations, and ml-ops's sixteen expectations, carried by the facades.
      expect(summary.checked).toBe(32);
      expect(main.stdout).toContain("dispatch-hook/esbuild instrumented the dispatch modules of jax, mlx, numba, pytorch");
      expect(main.stdout).toContain("ok: every registration landed");
      if (splitting) {
        // Each backend's dispatch module sits in a lazily loaded chunk of its own, with its facade.
        const chunks = readdirSync(away).filter((name) => /^basic-.*\.js$/.test(name));
        expect(chunks).toHaveLength(4);
        for (const chunk of chunks) expect(readFileSync(join(away, chunk), "utf8")).toMatch(/\bstep\(\{\s*"url":/);
      }
      // Source maps: the frame that threw names the original kernel file, not the bundle.
      expect(trace.stdout).toMatch(/ml-ops[\\/](kernels|implementations|dispatch[\\/]numba)\.js:\d+:\d+/);
    });
  }

  it("a bundle the plugin built is served by a host adapter: tables made up front, none loaded, a registration waiting, and strict passes (it failed, saying no loader was installed); without the plugin it fails", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/esbuild": { symlink: join(repoRoot, "node_modules/esbuild") },
      "node_modules/tensorkit/package.json": JSON.stringify({
        name: "tensorkit",
        type: "module",
        exports: { ".": "./index.js", "./*": "./*" },
        dispatchHook: { backends: { "*": { module: "./backends/{backend}.js", export: "table" } } },
      }),
      "node_modules/tensorkit/index.js":
        'import { Dispatcher } from "dispatch-hook";\nexport const tables = { cpu: new Dispatcher({ name: "cpu table", backend: "cpu" }) };\n',
      "node_modules/tensorkit/backends/cpu.js": 'import { tables } from "../index.js";\nexport const table = tables.cpu;\n',
      "node_modules/kit-ops/package.json": JSON.stringify({ name: "kit-ops", type: "module", exports: { ".": "./index.js" } }),
      "node_modules/kit-ops/index.js":
        'import { register } from "dispatch-hook";\nexport class Conv {}\nregister("cpu", Conv, () => "conv on cpu");\n',
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorkit: "*", "kit-ops": "*", "dispatch-hook": "*" },
      }),
      "main.mjs":
        'import { tables } from "tensorkit";\nimport { Conv } from "kit-ops";\nconsole.log(JSON.stringify({ tables: Object.keys(tables), conv: typeof Conv }));\n',
      "build.mjs": [
        'import { build } from "esbuild";',
        'import { dispatchHook } from "dispatch-hook/esbuild";',
        'await build({ entryPoints: ["main.mjs"], bundle: true, platform: "node", format: "esm", outfile: "out/main.js", logLevel: "error", plugins: process.env.WITHOUT_PLUGIN ? [] : [dispatchHook()] });',
      ].join("\n"),
    });
    for (const withoutPlugin of [false, true]) {
      const built = await run(dir, ["build.mjs"], withoutPlugin ? { WITHOUT_PLUGIN: "1" } : {});
      expect(built.code).toBe(0);
      const away = makeTree({ "package.json": JSON.stringify({ type: "module" }) });
      cpSync(join(dir, "out"), away, { recursive: true });
      const result = await run(away, [join(away, "main.js")], { NODE_OPTIONS: "", DISPATCH_HOOK_AUDIT: "strict" });
      expect(lastJson(result.stdout)).toEqual({ tables: ["cpu"], conv: "function" });
      expect(result.code, withoutPlugin ? "without the plugin" : "with the plugin").toBe(withoutPlugin ? 1 : 0);
    }
  });

  it('a plugin package marked "sideEffects": false, bundled minified or not: its registration module is kept, and the op lands; the audit finds what it expects by name (the module was dropped, and minified names failed strict)', async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/esbuild": { symlink: join(repoRoot, "node_modules/esbuild") },
      "node_modules/tensorkit/package.json": JSON.stringify({
        name: "tensorkit",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: { backends: { "*": { module: "./backends/{backend}.js", export: "table" } } },
      }),
      "node_modules/tensorkit/backends/cpu.js":
        'import { Dispatcher } from "dispatch-hook";\nexport const table = new Dispatcher({ name: "cpu table", backend: "cpu" });\n',
      "node_modules/se-ops/package.json": JSON.stringify({
        name: "se-ops",
        type: "module",
        sideEffects: false,
        exports: { "./*": "./*" },
        dispatchHook: { registrations: { cpu: "./cpu.js" }, expects: { cpu: ["Pool"] } },
      }),
      "node_modules/se-ops/ops.js": "export class Pool {}\n",
      "node_modules/se-ops/cpu.js":
        'import { register } from "dispatch-hook";\nimport { Pool } from "./ops.js";\nregister("cpu", Pool, () => "pool on cpu");\n',
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorkit: "*", "se-ops": "*", "dispatch-hook": "*" },
      }),
      "main.mjs": [
        'import { Pool } from "se-ops/ops.js";',
        'import("tensorkit/backends/cpu.js").then(({ table }) => console.log(JSON.stringify({ landed: table.has(Pool) })));',
      ].join("\n"),
      "build.mjs": [
        'import { build } from "esbuild";',
        'import { dispatchHook } from "dispatch-hook/esbuild";',
        'await build({ entryPoints: ["main.mjs"], bundle: true, platform: "node", format: process.env.FORMAT, minify: process.env.MINIFY === "1", outfile: "out/main.js", logLevel: "error", plugins: [dispatchHook()] });',
      ].join("\n"),
    });
    for (const [format, minify] of [
      ["esm", "0"],
      ["cjs", "0"],
      ["esm", "1"],
    ] as const) {
      const built = await run(dir, ["build.mjs"], { FORMAT: format, MINIFY: minify });
      expect(built.code, built.stderr).toBe(0);
      const away = makeTree({ "package.json": JSON.stringify({ type: format === "esm" ? "module" : "commonjs" }) });
      cpSync(join(dir, "out"), away, { recursive: true });
      const result = await run(away, [join(away, "main.js")], { NODE_OPTIONS: "", DISPATCH_HOOK_AUDIT: "strict" });
      expect(lastJson(result.stdout), `${format}, minify ${minify}`).toEqual({ landed: true });
      expect(result.stderr, `${format}, minify ${minify}`).toBe("");
      expect(result.code, `${format}, minify ${minify}: ${result.stdout}`).toBe(0);
    }
  });

  it("without the plugin, the same bundle misses, and its audit does not say ok", async () => {
    const { main } = await bundleAndRun(project(), { withoutPlugin: true });
    const summary = lastJson(main.stdout);
    expect(summary.results).toEqual({
      numba: "ERR_DISPATCH_NO_IMPL",
      jax: "ERR_DISPATCH_NO_IMPL",
      mlx: "ERR_DISPATCH_NO_IMPL",
      pytorch: "ERR_DISPATCH_NO_IMPL",
    });
    expect(summary.applied).toBe(0);
    expect(main.stdout).not.toContain("ok: every registration landed");
    expect(main.stdout).toContain("nothing was checked");
  });

  it("an expectation declared inline that nothing meets is a problem in the bundle's audit", async () => {
    const { main } = await bundleAndRun(project(), { ghost: true });
    const summary = lastJson(main.stdout);
    expect(summary.applied).toBe(16);
    expect(summary.problems).toEqual(["missing"]);
    expect(main.stdout).toMatch(/GhostOp on numba was expected \(by dispatch-hook\/esbuild options for ghost-ops\)/);
    expect(main.stdout).not.toContain("ok: every registration landed");
  });

  it("with code splitting, a registration module the app imports too runs in its window, after the table: a conflict between plugins is recorded, not thrown, and each registration is its plugin's", async () => {
    const spec = "tensorlab/link/numba/dispatch/basic.js";
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "node_modules/esbuild": { symlink: join(repoRoot, "node_modules/esbuild") },
      // A second plugin registering the same op type; the app imports both registration modules itself.
      "node_modules/other-ops/package.json": JSON.stringify({
        name: "other-ops",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: { registrations: { numba: "./numba.js" } },
      }),
      "node_modules/other-ops/numba.js": [
        'import { register } from "dispatch-hook";',
        'import { PoolLayer } from "ml-ops";',
        "register(\"numba\", PoolLayer, () => 'other');",
        "",
      ].join("\n"),
      // A third whose registration module awaits at its top level: imported by the facade, as without splitting.
      "node_modules/tla-ops/package.json": JSON.stringify({
        name: "tla-ops",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: { registrations: { numba: "./numba.js" } },
      }),
      "node_modules/tla-ops/numba.js": [
        'import { register } from "dispatch-hook";',
        "export class TlaOp {}",
        "await null;",
        "register(\"numba\", TlaOp, () => 'tla');",
        "",
      ].join("\n"),
      // A fourth whose registration module imports a module that awaits: imported too.
      "node_modules/init-ops/package.json": JSON.stringify({
        name: "init-ops",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: { registrations: { numba: "./numba.js" } },
      }),
      "node_modules/init-ops/init.js": "export const ready = await Promise.resolve(true);\n",
      "node_modules/init-ops/numba.js": [
        'import { register } from "dispatch-hook";',
        'import { ready } from "./init.js";',
        "export class InitOp {}",
        'register("numba", InitOp, () => ready);',
        "",
      ].join("\n"),
      // A fifth that imports the dispatch module back, while the facade awaits (tla-ops): imported.
      "node_modules/back-ops/package.json": JSON.stringify({
        name: "back-ops",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: { registrations: { numba: "./numba.js" } },
      }),
      "node_modules/back-ops/numba.js": [
        'import { register } from "dispatch-hook";',
        `import { numbaFuncify } from ${JSON.stringify(spec)};`,
        "export class BackOp {}",
        'register("numba", BackOp, () => typeof numbaFuncify.resolve);',
        "",
      ].join("\n"),
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorlab: "*", "ml-ops": "*", "other-ops": "*", "tla-ops": "*", "init-ops": "*", "back-ops": "*" },
      }),
      "app.mjs": [
        'import { threadAudit } from "dispatch-hook";',
        `const { numbaFuncify } = await import(${JSON.stringify(spec)});`,
        'const { PoolLayer } = await import("ml-ops");',
        'await import("ml-ops/dispatch/numba.js");',
        'await import("other-ops/numba.js");',
        "const report = threadAudit();",
        "console.log(JSON.stringify({",
        "  landed: numbaFuncify.resolve(new PoolLayer())(),",
        "  states: report.registrations.map((r) => [r.state, r.origin?.plugin]),",
        "  problems: report.problems.map((p) => p.kind),",
        "}));",
      ].join("\n"),
      "build.mjs": [
        'import { build } from "esbuild";',
        'import { dispatchHook } from "dispatch-hook/esbuild";',
        'await build({ entryPoints: ["app.mjs"], bundle: true, platform: "node", format: "esm", splitting: true, outdir: "out", outExtension: { ".js": ".mjs" }, logLevel: "error", plugins: [dispatchHook()] });',
      ].join("\n"),
    });
    const built = await run(dir, ["build.mjs"]);
    expect(built.stderr).toBe("");
    const app = await run(dir, [join(dir, "out/app.mjs")], { NODE_OPTIONS: "" });
    expect(app.stderr).toBe("");
    expect(app.code).toBe(0);
    expect(lastJson(app.stdout)).toEqual({
      landed: "pooled",
      states: [
        ["applied", "ml-ops"],
        ["refused", "other-ops"],
        ["applied", "tla-ops"],
        ["applied", "init-ops"],
        ["applied", "back-ops"],
      ],
      problems: ["conflict"],
    });
  });

  it("a dispatch module imported as text (an import attribute, or the loader option) is its text, as without the plugin", async () => {
    const spec = "tensorlab/link/numba/dispatch/basic.js";
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "node_modules/esbuild": { symlink: join(repoRoot, "node_modules/esbuild") },
      "attribute.mjs": [
        `import text from ${JSON.stringify(spec)} with { type: "text" };`,
        `import { numbaFuncify } from ${JSON.stringify(spec)};`,
        'import { PoolLayer } from "ml-ops";',
        "let landed; try { landed = numbaFuncify.resolve(new PoolLayer())(); } catch (e) { landed = e.code; }",
        "console.log(JSON.stringify({ text, landed }));",
      ].join("\n"),
      "option.mjs": `import text from ${JSON.stringify(spec)};\nconsole.log(JSON.stringify({ text }));\n`,
      "build.mjs": [
        'import { build } from "esbuild";',
        'import { dispatchHook } from "dispatch-hook/esbuild";',
        "const plugins = process.env.WITHOUT_PLUGIN ? [] : [dispatchHook()];",
        'const common = { bundle: true, platform: "node", format: "esm", outdir: "out", outExtension: { ".js": ".mjs" }, logLevel: "error", plugins };',
        'await build({ ...common, entryPoints: ["attribute.mjs"] });',
        'await build({ ...common, entryPoints: ["option.mjs"], loader: { ".js": "text" } });',
      ].join("\n"),
    });
    const source = readFileSync(join(dir, "node_modules", spec), "utf8");
    for (const without of [false, true]) {
      const built = await run(dir, ["build.mjs"], without ? { WITHOUT_PLUGIN: "1" } : {});
      expect(built.stderr).toBe("");
      const attribute = await run(dir, [join(dir, "out/attribute.mjs")]);
      expect(lastJson(attribute.stdout)).toEqual({ text: source, landed: without ? "ERR_DISPATCH_NO_IMPL" : "pooled" });
      const option = await run(dir, [join(dir, "out/option.mjs")]);
      expect(lastJson(option.stdout)).toEqual({ text: source });
    }
  });
});

// Written from a review: a gate meant for helper modules beside a {backend} pattern read only the
// loader's facts, so under a host adapter a typo in a named backend's export, with a plugin that
// expects an op there and registers nothing, gave an audit of ok with nothing checked.
describe("dispatch-hook/esbuild: a declared export the dispatch module does not have", () => {
  it("is a table problem of the bundle's audit", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/esbuild": { symlink: join(repoRoot, "node_modules/esbuild") },
      "node_modules/fw/package.json": JSON.stringify({
        name: "fw",
        type: "module",
        exports: { "./*": "./*" },
        dispatchHook: { backends: { cpu: { module: "./cpu.js", export: "tabel" } } },
      }),
      "node_modules/fw/cpu.js":
        'import { Dispatcher } from "dispatch-hook";\nexport const table = new Dispatcher({ name: "cpu table", backend: "cpu" });\n',
      "node_modules/fw/ops.js": "export class Conv {}\n",
      "node_modules/kit/package.json": JSON.stringify({
        name: "kit",
        type: "module",
        dispatchHook: { registrations: { cpu: "./cpu.js" }, expects: { cpu: ["Conv"] } },
      }),
      "node_modules/kit/cpu.js": "// registers nothing\n",
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { fw: "*", kit: "*", "dispatch-hook": "*" } }),
      "build.mjs": [
        'import { build } from "esbuild";',
        'import { dispatchHook } from "dispatch-hook/esbuild";',
        'await build({ entryPoints: ["main.mjs"], bundle: true, platform: "node", format: "esm", outdir: "out", logLevel: "error", plugins: [dispatchHook()] });',
        "",
      ].join("\n"),
      "main.mjs": [
        'import { threadAudit } from "dispatch-hook";',
        'import { table } from "fw/cpu.js";',
        "const audit = threadAudit();",
        "console.log(JSON.stringify({ ok: audit.ok, problems: audit.problems.map((p) => p.kind) }));",
        "",
      ].join("\n"),
    });
    const built = await run(dir, ["build.mjs"]);
    expect(built.stderr).toBe("");
    const result = await run(dir, [join(dir, "out/main.js")]);
    const out = lastJson(result.stdout) as { ok: boolean; problems: string[] };
    expect(out.ok).toBe(false);
    expect(out.problems).toContain("table");
  });
});
