/**
 * `dispatch-hook doctor --load`: the pre-flight. It loads every declared backend under the loader in
 * a child, runs none of the app's own code, and says what landed, from which plugin, and what is
 * wrong: a conflict between plugins, a registration module that throws or does not resolve, a
 * dispatch module that fails, a lazily named implementation whose export does not exist.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DoctorReport } from "../../src/cli/doctor-load.js";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { loader, makeTree, nodeBinary, nodeVersion, repoRoot, run, type Tree } from "./fixture.js";
import { frameworkEsm, typelessEsmFramework } from "./trees.js";

const cli = join(repoRoot, "dist/bundle/cli.js");

const registrationModule = (op: string, backend: string) =>
  `import { register } from "dispatch-hook";\nexport class ${op} {}\nregister(${JSON.stringify(backend)}, ${op}, () => "${op}");\n`;

function pluginPackage(name: string, registrations: Record<string, string>, files: Record<string, string>, extra = {}): Tree {
  return {
    [`node_modules/${name}/package.json`]: JSON.stringify({
      name,
      type: "module",
      dispatchHook: { registrations, ...extra },
    }),
    ...Object.fromEntries(Object.entries(files).map(([file, text]) => [`node_modules/${name}/${file}`, text])),
  };
}

const healthy: Tree = {
  ...frameworkEsm,
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  ...pluginPackage(
    "ml-ops",
    { numba: "./numba.js", jax: "./jax.js" },
    { "numba.js": registrationModule("Pool", "numba"), "jax.js": registrationModule("Pool", "jax") },
  ),
  "main.mjs": 'import { writeFileSync } from "node:fs";\nwriteFileSync("the-app-ran", "");\n',
  "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { tensorlab: "*", "ml-ops": "*", "dispatch-hook": "*" } }),
};

const troubled: Tree = {
  ...healthy,
  // A second plugin that registers the same op type on numba: only one can win.
  ...pluginPackage(
    "rival-ops",
    { numba: "./numba.js" },
    {
      "numba.js":
        'import { register } from "dispatch-hook";\nimport { Pool } from "ml-ops/numba.js";\nregister("numba", Pool, () => "rival");\n',
    },
  ),
  // A plugin whose jax module throws, and whose mlx module has a typo in its import.
  ...pluginPackage(
    "shaky-ops",
    { jax: "./jax.js", mlx: "./mlx.js" },
    { "jax.js": 'throw new Error("shaky-ops cannot start");\n', "mlx.js": 'import "./helpres.js";\n', "helpers.js": "" },
  ),
  "node_modules/tensorlab/link/mlx/dispatch/basic.js":
    'import { Dispatcher } from "dispatch-hook";\nexport const mlxFuncify = new Dispatcher({ name: "mlxFuncify", backend: "mlx" });\n',
  // A backend set declared in package.json, with a typo'd export.
  "node_modules/array-kit/package.json": JSON.stringify({
    name: "array-kit",
    type: "module",
    dispatchHook: { dispatchables: { arrays: { fast: { primaryTypes: [], implementations: { add: "./impl.js#ad" } } } } },
  }),
  "node_modules/array-kit/impl.js": "export function add(a, b) { return a + b; }\n",
  "package.json": JSON.stringify({
    name: "app",
    type: "module",
    dependencies: { tensorlab: "*", "ml-ops": "*", "rival-ops": "*", "shaky-ops": "*", "array-kit": "*", "dispatch-hook": "*" },
  }),
};

const doctor = (dir: string, ...args: string[]) => run(dir, [cli, "doctor", ...args]);

describe("doctor --load", () => {
  it("on a healthy app: what landed on each backend and from which plugin; exit 0; the app's code never ran", async () => {
    const dir = makeTree(healthy);
    const result = await doctor(dir, "--load", "main.mjs");
    expect(result.stdout).toMatch(/numba\s+node_modules\/tensorlab\/link\/numba\/dispatch\/basic\.js\n\s+landed\s+Pool \(ml-ops\)\n/);
    expect(result.stdout).toMatch(/jax\s+node_modules\/tensorlab\/link\/jax\/dispatch\/basic\.js\n\s+landed\s+Pool \(ml-ops\)\n/);
    expect(result.stdout).toContain("no problems found: every registration module ran, and every registration landed");
    expect(result.code).toBe(0);
    expect(existsSync(join(dir, "the-app-ran"))).toBe(false);
  });

  it("names a conflict, a module that throws, one that does not resolve, and a typo'd lazy export; exit 1", async () => {
    const dir = makeTree(troubled);
    const result = await doctor(dir, "--load", "--json");
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report).toMatchObject({ format: "dispatch-hook/doctor", version: 2, ok: false, loaded: true });
    const kinds = report.findings.map((f) => `${f.kind} ${f.backend ?? ""}`);
    // One finding per cause, each named with its plugin; nothing that merely follows from one.
    expect(kinds.sort()).toEqual(["conflict numba", "implementation fast [arrays]", "registration-module jax", "registration-module mlx"]);
    const text = report.findings.map((f) => f.message).join("\n");
    expect(text).toContain("shaky-ops: its registration module for jax");
    expect(text).toContain("threw: shaky-ops cannot start");
    expect(text).toMatch(/shaky-ops: its registration module for mlx \(.*mlx\.js\) imports a module that does not resolve: .*helpres\.js/);
    expect(text).toMatch(/Pool already has an implementation on numba .*ml-ops.*rival-ops/);
    expect(text).toMatch(/"\.\/impl\.js#ad"/);
    // Every finding carries dispatch-hook's own code; the code of the error behind it is its cause.
    expect(report.findings.map((f) => [f.kind, f.backend, f.code, f.cause]).sort()).toEqual([
      ["conflict", "numba", "ERR_DISPATCH_CONFLICT", undefined],
      ["implementation", "fast [arrays]", "ERR_DISPATCH_IMPL_LOAD", undefined],
      ["registration-module", "jax", "ERR_DISPATCH_REGISTRATION_MODULE", undefined],
      ["registration-module", "mlx", "ERR_DISPATCH_REGISTRATION_MODULE", "ERR_MODULE_NOT_FOUND"],
    ]);
    const numba = report.backends.find((b) => b.backend === "numba");
    expect(numba?.landed).toContainEqual({ op: "Pool", plugin: "ml-ops" });
    expect(result.code).toBe(1);

    const human = await doctor(dir, "--load");
    expect(human.stdout).toContain("[conflict]");
    expect(human.stdout).toContain("code: ERR_DISPATCH_CONFLICT");
    expect(human.stdout).toMatch(/problem\(s\):/);
    expect(human.code).toBe(1);
  });

  // doctor reads the whole tree; the loader only what the app depends on, and what packages depending on a framework do.
  // A plugin that only a dependency of the app depends on never ran in the child, and doctor said "no problems found".
  it("a plugin the loader cannot find before its backend loads (a dependency's dependency) is a finding, with the fix", async () => {
    const dir = makeTree({
      ...healthy,
      ...pluginPackage("deep-ops", { numba: "./numba.js" }, { "numba.js": registrationModule("Deep", "numba") }),
      "node_modules/toolkit/package.json": JSON.stringify({ name: "toolkit", dependencies: { "deep-ops": "*" } }),
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorlab: "*", "ml-ops": "*", toolkit: "*", "dispatch-hook": "*" },
      }),
    });
    const result = await doctor(dir, "--load", "--json");
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report.findings.map((f) => [f.kind, f.backend, f.code])).toEqual([["registration-module", "numba", "ERR_DISPATCH_LOADER"]]);
    expect(report.findings[0]?.message).toContain("deep-ops: its registration module for numba");
    expect(report.findings[0]?.fix).toContain("app's dependencies");
    expect(result.code).toBe(1);
  });

  // A plugin's registration module for numba that registers for "numbaa": the child's audit held it waiting, and doctor said ok.
  it("a registration for a backend that no package declares, made by a plugin's registration module, is a note naming the nearest backend", async () => {
    const dir = makeTree({
      ...healthy,
      ...pluginPackage(
        "ml-ops",
        { numba: "./numba.js", jax: "./jax.js" },
        { "numba.js": registrationModule("Pool", "numbaa"), "jax.js": registrationModule("Pool", "jax") },
      ),
    });
    const result = await doctor(dir, "--load", "--json");
    const report = JSON.parse(result.stdout) as DoctorReport;
    // A note, not a finding: a plugin may register for a backend the program announces itself.
    expect(report.findings).toEqual([]);
    expect(report.notes.map((f) => [f.kind, f.backend, f.code])).toEqual([["pending", "numbaa", "ERR_DISPATCH_UNKNOWN_BACKEND"]]);
    expect(report.notes[0]?.message).toContain('did you mean "numba"?');
    expect(result.code).toBe(0);
  });

  it("a registration module that does not exist is one finding, not one from the config, one from its plugin and one from its window", async () => {
    const dir = makeTree({
      ...healthy,
      ...pluginPackage("lost-ops", { numba: "./numba.js" }, {}),
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorlab: "*", "lost-ops": "*", "dispatch-hook": "*" },
      }),
    });
    const result = await doctor(dir, "--load", "--json");
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report.findings.map((f) => f.message)).toEqual([
      expect.stringMatching(/^lost-ops: the registration module for numba, .*numba\.js, does not exist$/),
    ]);
    expect(report.findings[0]).toMatchObject({ kind: "config", code: "ERR_DISPATCH_REGISTRATION_MODULE" });
    expect(result.code).toBe(1);
  });

  it("a project that only chooses backends per call: no backend to load, nothing to complain of; exit 0", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/array-kit/package.json": JSON.stringify({
        name: "array-kit",
        type: "module",
        // CommonJS: Node 20.16, the engines minimum, cannot require() an ES module.
        dispatchHook: { dispatchables: { arrays: { fast: { primaryTypes: [], implementations: { add: "./impl.cjs#add" } } } } },
      }),
      "node_modules/array-kit/impl.cjs": "exports.add = (a, b) => a + b;\n",
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { "array-kit": "*", "dispatch-hook": "*" } }),
    });
    const result = await doctor(dir, "--load");
    expect(result.stdout).not.toContain("watches nothing");
    expect(result.stdout).toContain("arrays: fast");
    expect(result.code).toBe(0);
  });

  it("a named type whose module has no such export, or only re-exports it, is a finding: no value would ever be of that type", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/ml-wasm/package.json": JSON.stringify({
        name: "ml-wasm",
        type: "module",
        dispatchHook: {
          dispatchables: {
            "ml-ops": {
              wasm: {
                primaryTypes: [
                  "./wasm-tensor.js#WasmTensr",
                  "./index.js#WasmTensor",
                  "./wasm-tensor.js#WasmTensor",
                  "./renamed.js#WasmArray",
                ],
                secondaryTypes: ["@./like.cjs#ArrayLike"],
                implementations: {},
              },
            },
          },
        },
      }),
      "node_modules/ml-wasm/wasm-tensor.js": "export class WasmTensor {}\n",
      "node_modules/ml-wasm/index.js": 'export { WasmTensor } from "./wasm-tensor.js";\n',
      "node_modules/ml-wasm/like.cjs": "exports.ArrayLike = 3;\n",
      // Defined here, under another name (a new user's case, misdiagnosed as a re-export).
      "node_modules/ml-wasm/renamed.js": "class WasmImpl {}\nexport { WasmImpl as WasmArray };\n",
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { "ml-wasm": "*", "dispatch-hook": "*" } }),
    });
    // Reading the configuration finds nothing: every specifier resolves.
    expect((await doctor(dir)).code).toBe(0);
    const result = await doctor(dir, "--load", "--json");
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report.findings.map((f) => [f.kind, f.backend, f.code])).toEqual([
      ["type", "wasm [ml-ops]", "ERR_DISPATCH_TYPE_NOT_FOUND"],
      ["type", "wasm [ml-ops]", "ERR_DISPATCH_TYPE_NOT_FOUND"],
      ["type", "wasm [ml-ops]", "ERR_DISPATCH_TYPE_NOT_FOUND"],
      ["type", "wasm [ml-ops]", "ERR_DISPATCH_TYPE_LOAD"],
    ]);
    const [typo, reexport, renamed, abstract] = report.findings.map((f) => f.message);
    expect(renamed).toContain('its export "WasmArray" is a class named "WasmImpl", and a named type is matched by the class\'s own name');
    expect(report.findings[2]?.fix).toContain("class WasmArray { … }");
    expect(typo).toContain('the type "./wasm-tensor.js#WasmTensr" in primaryTypes: its module has no export "WasmTensr"');
    expect(reexport).toContain('the type "./index.js#WasmTensor" in primaryTypes: its module re-exports WasmTensor');
    expect(abstract).toContain("which instanceof cannot ask");
    expect(result.code).toBe(1);
  });

  // Where the node under test runs TypeScript itself (22.18+, 24, 26): the class's text has its types
  // stripped to blanks, and is compared with the file as written, those blanks standing for anything. Skipped where it runs none.
  const strips = ["strip", "transform"].includes(
    spawnSync(nodeBinary, ["-p", "process.features.typescript"], { encoding: "utf8" }).stdout.trim(),
  );
  it.skipIf(!strips)(`a named type defined in a TypeScript module is no finding (Node ${nodeVersion})`, async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { "dispatch-hook": "*" },
        dispatchHook: { dispatchables: { "ml-ops": { ts: { primaryTypes: ["./src/ts-array.ts#TsArray"] } } } },
      }),
      "src/ts-array.ts": "export class TsArray {\n  data: number[];\n  constructor(data: number[]) { this.data = data; }\n}\n",
    });
    const result = await doctor(dir, "--load", "--json");
    expect((JSON.parse(result.stdout) as DoctorReport).findings).toEqual([]);
    expect(result.code).toBe(0);
  });

  // Written from a new user's trial: without --load, a lazily named implementation whose module does not exist
  // passed ("no problems found"), though doctor checked that each named type's module exists.
  it("without --load, an implementation named by a module that does not exist is a finding; with --load it is found once", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/array-kit/package.json": JSON.stringify({
        name: "array-kit",
        type: "module",
        dispatchHook: {
          dispatchables: {
            arrays: {
              fast: { primaryTypes: [], implementations: { add: "./impl.cjs#add", pool: "./pol.cjs#pool" } },
              // A wrapping backend's lazily named convert is an implementation too.
              wrapped: { primaryTypes: [], wraps: { backend: "fast", convert: "./convrt.cjs#convert", restore: "./impl.cjs#add" } },
            },
          },
        },
      }),
      "node_modules/array-kit/impl.cjs": "exports.add = (a, b) => a + b;\n",
      "node_modules/array-kit/pool.cjs": "exports.pool = (a) => a;\n",
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { "array-kit": "*", "dispatch-hook": "*" } }),
    });
    for (const args of [[], ["--load"]]) {
      const result = await doctor(dir, ...args, "--json");
      const report = JSON.parse(result.stdout) as DoctorReport;
      expect(report.findings.map((f) => [f.kind, f.backend, f.code])).toEqual([
        ["implementation", "fast [arrays]", "ERR_DISPATCH_IMPL_LOAD"],
        ["implementation", "wrapped [arrays]", "ERR_DISPATCH_IMPL_LOAD"],
      ]);
      expect(report.findings[0]?.message).toContain("pol.cjs");
      expect(report.findings[1]?.message).toContain("convrt.cjs");
      expect(result.code).toBe(1);
    }
  });

  it("a backend whose declared export holds no table is a finding even where no plugin registers for it yet", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/fw/package.json": JSON.stringify({
        name: "fw",
        type: "module",
        dispatchHook: { backends: { gpu: { module: "./gpu.js", export: "tabel" }, cpu: { module: "./cpu.js", export: "table" } } },
      }),
      "node_modules/fw/gpu.js":
        'import { Dispatcher } from "dispatch-hook";\nexport const table = new Dispatcher({ name: "gpu table", backend: "gpu" });\n',
      // A table made later, by a call: the export exists, and is no finding.
      "node_modules/fw/cpu.js": "export let table;\nexport function init() {\n  table = new Map();\n}\n",
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { fw: "*", "dispatch-hook": "*" } }),
    });
    const result = await doctor(dir, "--load", "--json");
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report.findings.map((f) => [f.kind, f.backend, f.code])).toEqual([["table", "gpu", "ERR_DISPATCH_TABLE_SHAPE"]]);
    expect(report.findings[0]?.message).toMatch(
      /gpu\.js was loaded as backend gpu's dispatch module, but it has no export "tabel" \(its exports: table\)/,
    );
    expect(result.code).toBe(1);
    // The text says it loaded, not that it did not.
    const text = await doctor(dir, "--load");
    expect(text.stdout).toMatch(/gpu\s+node_modules\/fw\/gpu\.js\n\s+loaded, no table at its declared export\n/);
  });

  it("a backend with two dispatch modules whose plugin throws: one finding, not one per module", async () => {
    const framework = (name: string): Tree => ({
      [`node_modules/${name}/package.json`]: JSON.stringify({
        name,
        type: "module",
        dispatchHook: { backends: { cpu: { module: "./cpu.js", export: "table" } } },
      }),
      [`node_modules/${name}/cpu.js`]: `import { Dispatcher } from "dispatch-hook";\nexport const table = new Dispatcher({ name: "${name} cpu", backend: "cpu" });\n`,
    });
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      ...framework("fw"),
      ...framework("fw2"),
      ...pluginPackage("pl", { cpu: "./r.js" }, { "r.js": 'throw new Error("plugin boom");\n' }),
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { fw: "*", fw2: "*", pl: "*", "dispatch-hook": "*" } }),
    });
    const report = JSON.parse((await doctor(dir, "--load", "--json")).stdout) as DoctorReport;
    const boom = report.findings.filter((f) => f.message.includes("plugin boom"));
    expect(boom.map((f) => [f.kind, f.code])).toEqual([["registration-module", "ERR_DISPATCH_REGISTRATION_MODULE"]]);
  });

  it("a declared dispatch module that does not exist is one finding, from the config, not one more from loading it", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/fw/package.json": JSON.stringify({
        name: "fw",
        type: "module",
        dispatchHook: { backends: { gpu: { module: "./gpu.js", export: "table" } } },
      }),
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { fw: "*", "dispatch-hook": "*" } }),
    });
    const report = JSON.parse((await doctor(dir, "--load", "--json")).stdout) as DoctorReport;
    expect(report.findings.map((f) => [f.kind, f.code])).toEqual([["config", "ERR_DISPATCH_MODULE_NOT_FOUND"]]);
  });

  it("a dispatch module that keeps the event loop alive (a timer, a pool's heartbeat) does not keep the pre-flight waiting", async () => {
    const dir = makeTree({
      ...healthy,
      "node_modules/tensorlab/link/numba/dispatch/basic.js": `${healthy["node_modules/tensorlab/link/numba/dispatch/basic.js"]}setInterval(() => {}, 1000);\n`,
    });
    const started = Date.now();
    const result = await Promise.race([
      doctor(dir, "--load"),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20_000).unref()),
    ]);
    expect(result, "doctor --load was still running after 20 s").toBeDefined();
    expect(result?.stdout).toMatch(/numba\s+node_modules\/tensorlab\/link\/numba\/dispatch\/basic\.js\n\s+landed\s+Pool \(ml-ops\)\n/);
    expect(result?.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it("a dispatch module that ends the process: the finding says so, and names the backend being loaded", async () => {
    const dir = makeTree({
      ...healthy,
      "node_modules/tensorlab/link/jax/dispatch/basic.js": "process.exit(0);\n",
    });
    const report = JSON.parse((await doctor(dir, "--load", "--json")).stdout) as DoctorReport;
    const stopped = report.findings.filter((f) => f.message.includes("probe stopped"));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]?.backend).toBe("jax");
    expect(stopped[0]?.message).toMatch(/ended the process \(exit code 0\) while jax's dispatch module loaded/);
  });

  it("usage errors print the subcommand's usage and exit 2; --help exits 0", async () => {
    const dir = makeTree(healthy);
    const unknown = await doctor(dir, "--lod");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option --lod");
    expect(unknown.stderr).toContain("Usage: dispatch-hook doctor");
    const missing = await doctor(dir, "nowhere");
    expect(missing.code).toBe(2);
    const help = await doctor(dir, "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--load");
  });
});

// blurkit loads its CommonJS dispatch module lazily with createRequire(); blur-ops registers Blur
// for it. The module.register hooks (Node 20, 22 before 22.22.3, 24 before 24.11.1) never see
// require(), so the real run misses; doctor imports the module, where they do.
const requiredLazily: Tree = {
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  "node_modules/blurkit/package.json": JSON.stringify({
    name: "blurkit",
    type: "module",
    exports: { ".": "./index.js" },
    dispatchHook: { backends: { fast: { module: "./backends/fast.cjs", export: "fastTable" } } },
  }),
  "node_modules/blurkit/index.js": [
    'import { createRequire } from "node:module";',
    "export function blur(image) {",
    '  const { fastTable } = createRequire(import.meta.url)("./backends/fast.cjs");',
    "  return fastTable.resolve(image)(image);",
    "}",
    "",
  ].join("\n"),
  "node_modules/blurkit/backends/fast.cjs":
    'const { Dispatcher } = require("dispatch-hook");\nexports.fastTable = new Dispatcher({ name: "fastTable", backend: "fast" });\n',
  ...pluginPackage(
    "blur-ops",
    { fast: "./fast.js" },
    {
      "index.js": "export class Blur {}\n",
      "fast.js":
        'import { register } from "dispatch-hook";\nimport { Blur } from "./index.js";\nregister("fast", Blur, () => "blurred");\n',
    },
  ),
  "main.mjs": [
    'import { blur } from "blurkit";',
    'import { Blur } from "blur-ops/index.js";',
    "try { console.log(JSON.stringify({ out: blur(new Blur()) })); }",
    "catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }",
  ].join("\n"),
  "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { blurkit: "*", "blur-ops": "*", "dispatch-hook": "*" } }),
};

describe("a CommonJS dispatch module that the framework require()s", () => {
  const offThread = hookMode(nodeVersion) === "register";

  it.skipIf(!offThread)(
    `doctor says it is served only when imported, and the miss says why (Node ${nodeVersion}, module.register)`,
    async () => {
      const dir = makeTree(requiredLazily);
      const result = await doctor(dir, "--load");
      expect(result.stdout).toMatch(/fast\s+node_modules\/blurkit\/backends\/fast\.cjs\n\s+landed\s+Blur \(blur-ops\)\n/);
      expect(result.stdout).toContain("is CommonJS: on Node");
      expect(result.stdout).toContain("served only when it is imported, not when it is require()d");
      expect(result.stdout).toContain(">=22.22.3 or >=24.11.1");
      expect(result.stdout).not.toContain("every registration landed\n");
      const json = JSON.parse((await doctor(dir, "--load", "--json")).stdout) as DoctorReport;
      expect(json.notes.map((n) => n.backend)).toEqual(["fast"]);

      const real = await run(dir, ["--import", loader, "main.mjs"]);
      const miss = JSON.parse(real.stdout.trim()) as { code: string; message: string };
      expect(miss.code).toBe("ERR_DISPATCH_NO_IMPL");
      expect(miss.message).toContain("fast.cjs was loaded with require(), which the register hooks of Node");
      expect(miss.message).not.toContain("To fix: register an implementation");
    },
  );

  // cjsfw's index require()s its CommonJS dispatch module; cjs-ops's registration module is an ES
  // module with a top-level await, which require() cannot load. Before, doctor imported the
  // dispatch module, where the facade imports the registration module and the await is fine, and
  // said "no problems found" while the real run failed strict.
  it.skipIf(offThread)(
    `a registration module that require() cannot load (top-level await) is a finding naming it, as the real run fails (Node ${nodeVersion})`,
    async () => {
      const dir = makeTree({
        "node_modules/dispatch-hook": { symlink: "<repo>" },
        "node_modules/cjsfw/package.json": JSON.stringify({
          name: "cjsfw",
          main: "index.js",
          dispatchHook: { backends: { cpu: { module: "./dispatch/cpu.js", export: "table" } } },
        }),
        "node_modules/cjsfw/index.js": 'module.exports = require("./dispatch/cpu.js");\n',
        "node_modules/cjsfw/dispatch/cpu.js":
          'const { Dispatcher } = require("dispatch-hook");\nexports.table = new Dispatcher({ name: "cpu table", backend: "cpu" });\n',
        ...pluginPackage(
          "cjs-ops",
          { cpu: "./cpu.js" },
          {
            "cpu.js": [
              'import { register } from "dispatch-hook";',
              "export class Relu {}",
              "await new Promise((resolve) => setTimeout(resolve, 10));",
              'register("cpu", Relu, () => "relu on cpu");',
              "",
            ].join("\n"),
          },
          { expects: { cpu: ["Relu"] } },
        ),
        "main.mjs": 'import { table } from "cjsfw";\nconsole.log(typeof table.resolve);\n',
        "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { cjsfw: "*", "cjs-ops": "*", "dispatch-hook": "*" } }),
      });
      const real = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
      expect(real.stderr).toContain("require() cannot be used on an ESM graph with top-level await");
      expect(real.code).toBe(1);

      const result = await doctor(dir, "--load", "--json");
      const report = JSON.parse(result.stdout) as DoctorReport;
      const finding = report.findings.find((f) => f.kind === "registration-module");
      expect(finding).toMatchObject({ backend: "cpu", code: "ERR_DISPATCH_REGISTRATION_MODULE", cause: "ERR_REQUIRE_ASYNC_MODULE" });
      expect(finding?.message).toMatch(/^cjs-ops: the registration module for cpu \(\S+\/cjs-ops\/cpu\.js\) cannot be require\(\)d/);
      expect(finding?.fix).toContain("top-level await");
      expect(report.backends.find((b) => b.backend === "cpu")?.modules).toEqual([expect.stringMatching(/cjsfw\/dispatch\/cpu\.js$/)]);
      expect(result.code).toBe(1);
      const human = await doctor(dir, "--load");
      expect(human.stdout).toMatch(/cpu\s+node_modules\/cjsfw\/dispatch\/cpu\.js \(require\(\)d, as CommonJS\)\n/);
    },
  );

  it.skipIf(offThread)(`with module.registerHooks the real run lands, and doctor has nothing to add (Node ${nodeVersion})`, async () => {
    const dir = makeTree(requiredLazily);
    const result = await doctor(dir, "--load");
    expect(result.stdout).not.toContain("served only when it is imported");
    expect(result.code).toBe(0);
    const real = await run(dir, ["--import", loader, "main.mjs"]);
    expect(JSON.parse(real.stdout.trim())).toEqual({ out: "blurred" });
  });
});

describe(`doctor --load and a package with no "type" (Node ${nodeVersion})`, () => {
  // Node reads the syntax of such a package's .js files: an ES module there is loaded as one, not
  // required as CommonJS ("Cannot use import statement outside a module" was a false finding).
  it.skipIf(hookMode(nodeVersion) !== "registerHooks")("loads a .js ES module of it as the ES module it is: no finding", async () => {
    const dir = makeTree(typelessEsmFramework);
    const result = await doctor(dir, "--load");
    expect(result.stdout).not.toContain("Cannot use import statement");
    expect(result.stdout).toContain("no problems found");
    expect(result.code).toBe(0);
  });
});

describe(`doctor --load, a dispatch module that loads where the loader does not see it (Node ${nodeVersion}, ${hookMode(nodeVersion)})`, () => {
  // tsx's require() of a .cts file goes around Node's module.registerHooks: the module loads, its
  // table never reaches dispatch-hook. Before, doctor said "did not load" and "no problems found", exit 0.
  it.runIf(hookMode(nodeVersion) === "registerHooks")(
    "a backend a plugin wants that loaded without its table reaching dispatch-hook is a finding; exit 1",
    async () => {
      const dir = makeTree({
        "node_modules/dispatch-hook": { symlink: "<repo>" },
        "node_modules/tsx": { symlink: join(repoRoot, "node_modules/tsx") },
        "node_modules/tsk/package.json": JSON.stringify({
          name: "tsk",
          dispatchHook: { backends: { tpu: { module: "./backends/tpu.cts", export: "table" } } },
        }),
        "node_modules/tsk/backends/tpu.cts":
          'const { Dispatcher } = require("dispatch-hook");\nconst table: unknown = new Dispatcher({ name: "tpu", backend: "tpu" });\nmodule.exports = { table };\n',
        ...pluginPackage("tops", { tpu: "./tpu.js" }, { "tpu.js": registrationModule("Conv", "tpu") }, { expects: { tpu: ["Conv"] } }),
        "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { tsk: "*", tops: "*", "dispatch-hook": "*" } }),
      });
      const result = await run(dir, [cli, "doctor", "--load", "--json"], { NODE_OPTIONS: "--import tsx" });
      const report = JSON.parse(result.stdout) as DoctorReport;
      expect(report.backends.find((b) => b.backend === "tpu")?.loaded).toBe(false);
      expect(report.findings.map((f) => [f.kind, f.backend, f.code])).toEqual([["dispatch-module", "tpu", "ERR_DISPATCH_LOADER"]]);
      expect(report.findings[0]?.message).toContain("no table of it reached dispatch-hook, so what tops wants there never lands");
      expect(report.ok).toBe(false);
      expect(result.code).toBe(1);
    },
  );
});
