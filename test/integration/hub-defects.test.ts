/**
 * Defects of the registry and the loader, each shown by a real node process the way a user would
 * see it: what a table holds, what the audit says, whether an import throws, what is left on the
 * heap. Each test asserts the right behaviour; see each group for which ones failed when written.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import type { Tree } from "./fixture.js";
import { appJson, lastJson, loader, makeTree, nodeBinary, nodeVersion, run } from "./fixture.js";
import { frameworkEsm } from "./trees.js";

const mode = hookMode(nodeVersion);

/** What the node binary under test can do: require() of an ES module, and TypeScript type stripping. */
const features = JSON.parse(
  execFileSync(
    nodeBinary,
    [
      "-p",
      "JSON.stringify({ requireModule: process.features.require_module === true, typescript: typeof process.features.typescript === 'string' })",
    ],
    { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } },
  ),
) as { requireModule: boolean; typescript: boolean };

const linked: Tree = { "node_modules/dispatch-hook": { symlink: "<repo>" } };

/**
 * A framework (tensorkit) whose cpu table has a built-in op, Add: written into the table directly,
 * or registered through dispatch-hook's register() (`addThrough: "registry"`). It also has a gpu
 * backend, and kit-ops/ops.js holds op classes for the plugins.
 */
function tensorkit(addThrough: "table" | "registry" = "table"): Tree {
  return {
    ...linked,
    "node_modules/tensorkit/package.json": JSON.stringify({
      name: "tensorkit",
      type: "module",
      exports: { ".": "./index.js", "./*": "./*" },
      dependencies: { "dispatch-hook": "*" },
      dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
    }),
    "node_modules/tensorkit/index.js": 'export { Add } from "./helper.js";\n',
    "node_modules/tensorkit/helper.js": "export class Add {}\n",
    "node_modules/tensorkit/backends/cpu/table.js": [
      `import { Dispatcher${addThrough === "registry" ? ", register" : ""} } from "dispatch-hook";`,
      'import { Add } from "../../helper.js";',
      'export const cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });',
      addThrough === "registry" ? 'register("cpu", Add, () => "add on cpu");' : 'cpuTable.register(Add, () => "add on cpu");',
      "",
    ].join("\n"),
    "node_modules/tensorkit/backends/gpu/table.js": [
      'import { Dispatcher } from "dispatch-hook";',
      'export const gpuTable = new Dispatcher({ name: "gpuTable", backend: "gpu" });',
      "",
    ].join("\n"),
    "node_modules/kit-ops/ops.js": "export class Conv {}\nexport class Pool {}\n",
  };
}

/** A plugin whose package.json declares a registration module for cpu; `source` is that module. */
function cpuPlugin(name: string, source: string): Tree {
  const file = name === "kit-ops" ? "reg/cpu.js" : "cpu.js";
  return {
    [`node_modules/${name}/package.json`]: JSON.stringify({
      name,
      type: "module",
      exports: { "./*": "./*" },
      dependencies: { tensorkit: "*", "dispatch-hook": "*" },
      dispatchHook: { registrations: { cpu: `./${file}` } },
    }),
    [`node_modules/${name}/${file}`]: source,
  };
}

const app = (plugins: readonly string[]) =>
  appJson({ type: "module", dependencies: Object.fromEntries(["tensorkit", "dispatch-hook", ...plugins].map((d) => [d, "*"])) });

/** Top-level awaits a registration module may make before it registers. */
const awaits = {
  "after awaiting a timer": "await new Promise((resolve) => setTimeout(resolve, 20));",
  "after awaiting an already settled promise": "await null;",
} as const;
/** The same, and the reference: a synchronous registration module, whose audit the others must match. */
const withReference = { "with no await (the reference)": "", ...awaits } as const;

/** kit-ops's registration module: registers Conv through register(), after `wait` (a line of code, or nothing). */
const registersConv = (wait: string) =>
  [
    'import { register } from "dispatch-hook";',
    'import { Conv } from "../ops.js";',
    wait,
    'register("cpu", Conv, () => "conv on cpu");',
    "",
  ].join("\n");

/** kit-ops's registration module: writes Conv into the table itself, after `wait`. */
const writesConv = (wait: string) =>
  [
    'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
    'import { Conv } from "../ops.js";',
    wait,
    'cpuTable.register(Conv, () => "conv on cpu");',
    "",
  ].join("\n");

/** more-ops's registration module: registers Pool through register(), synchronously. */
const registersPool =
  'import { register } from "dispatch-hook";\nimport { Pool } from "kit-ops/ops.js";\nregister("cpu", Pool, () => "pool on cpu");\n';

/**
 * The app: imports the cpu table statically, reads it on its first line, then prints what the
 * table answers and what the default registry's audit says.
 */
const reportCpu = [
  'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
  'import { Conv, Pool } from "kit-ops/ops.js";',
  "const first = { conv: cpuTable.has(Conv), pool: cpuTable.has(Pool) };",
  'const { registry } = await import("dispatch-hook");',
  "const call = (type) => { try { return cpuTable.resolve(new type())(); } catch (e) { return e.code; } };",
  "const r = registry.verify();",
  "console.log(JSON.stringify({",
  "  first,",
  "  conv: call(Conv),",
  "  registrations: r.registrations.map((x) => x.op + ':' + x.state + ':' + x.tables.map((t) => t.mechanism).join(',') + ':' + (x.origin?.plugin ?? 'no plugin')),",
  "  outside: r.outside.map((w) => w.op + ' by ' + w.plugin),",
  "  plugins: r.plugins.map((p) => p.plugin + ':' + p.state),",
  "  problems: r.problems.map((p) => p.kind + ': ' + p.message),",
  "}));",
  "",
].join("\n");

describe(`backend sets stay in their own namespace (Node ${nodeVersion}, ${mode})`, () => {
  // A backend set made with createBackends() whose backends share their names with a framework's
  // backends that the loader watches (numba: a Dispatcher, jax: a Map).
  const tree = (main: string) =>
    makeTree({
      ...linked,
      ...frameworkEsm,
      "node_modules/tensorlab/link/jax/dispatch/basic.js": "export const jaxFuncify = new Map();\n",
      "package.json": appJson({ type: "module", dependencies: { tensorlab: "*", "dispatch-hook": "*" } }),
      "main.mjs": main,
    });
  const loadFramework = [
    'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
    'const { jaxFuncify } = await import("tensorlab/link/jax/dispatch/basic.js");',
  ];
  const makeSet = [
    'const { createBackends, dispatchable } = await import("dispatch-hook");',
    "class NumbaArray {}",
    "class JaxArray {}",
    'const backends = createBackends({ name: "mylib", discover: false });',
    'backends.declare({ name: "numba", primaryTypes: [NumbaArray], implementations: { pool: () => "pool by mylib on numba" } });',
    'backends.declare({ name: "jax", primaryTypes: [JaxArray], implementations: { pool: () => "pool by mylib on jax" } });',
    'const pool = dispatchable((x) => "reference pool", { name: "pool", args: ["x"], backends });',
  ];
  const print =
    "console.log(JSON.stringify({ numba: [...numbaFuncify.entries.keys()].map((k) => k.name), jax: [...jaxFuncify.keys()].map((k) => k.name ?? String(k)), calls: [pool(new NumbaArray()), pool(new JaxArray()), pool(1)] }));";
  const expected = { numba: [], jax: [], calls: ["pool by mylib on numba", "pool by mylib on jax", "reference pool"] };

  it("the set's own registry reports its own backends and tables only, not the framework's of the same names (it counted them)", async () => {
    const dir = tree(
      [
        ...loadFramework,
        ...makeSet,
        "pool(new NumbaArray());",
        "const report = backends.registry.verify();",
        "console.log(JSON.stringify({ backends: report.backends.map((b) => b.backend + ':' + b.tables), text: backends.registry.format().split('\\n').filter((l) => l.startsWith('· backends')) }));",
      ].join("\n"),
    );
    const hooked = await run(dir, ["--import", loader, "main.mjs"]);
    expect(lastJson(hooked.stdout)).toEqual({
      backends: ["jax:1", "numba:1"],
      text: ["· backends: jax loaded (1 table), numba loaded (1 table)"],
    });
    expect(hooked.code).toBe(0);
  });

  for (const when of ["before", "after"] as const) {
    it(`a backend set's implementations never land in the framework's tables of the same backend names (set made ${when} the framework's backends load), and the set still works`, async () => {
      const dir = tree([...(when === "before" ? [...makeSet, ...loadFramework] : [...loadFramework, ...makeSet]), print].join("\n"));
      const plain = await run(dir, ["main.mjs"]);
      expect(lastJson(plain.stdout)).toEqual(expected);
      const hooked = await run(dir, ["--import", loader, "main.mjs"]);
      expect(hooked.stderr).toBe("");
      expect(lastJson(hooked.stdout)).toEqual(expected);
      expect(hooked.code).toBe(0);
    });
  }
});

describe(`a backend set's registry does not explain a framework table's miss (Node ${nodeVersion}, ${mode})`, () => {
  // The set's function is named pool; the framework's numba Dispatcher misses on a class of its own
  // that is also named pool, and the program handles that miss. Before, the set's registration was
  // recorded as an "identity" problem ("made for another class named pool") and strict failed.
  it("strict passes, and the miss error names nothing of the set", async () => {
    const dir = makeTree({
      ...linked,
      ...frameworkEsm,
      "package.json": appJson({ type: "module", dependencies: { tensorlab: "*", "dispatch-hook": "*" } }),
      "main.mjs": [
        'import { createBackends, dispatchable } from "dispatch-hook";',
        'const backends = createBackends({ name: "mylib", discover: false });',
        'backends.declare({ name: "numba", primaryTypes: [Float32Array], implementations: { pool: () => "pool by mylib" } });',
        'const pool = dispatchable((x) => "reference pool", { name: "pool", args: ["x"], backends });',
        'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        "const Own = { pool: class {} }.pool;",
        "let message = '';",
        "try { numbaFuncify.resolve(new Own()); } catch (e) { message = e.message; }",
        "console.log(JSON.stringify({ set: pool(new Float32Array(1)), mentionsSet: message.includes('mylib') || message.includes('registration #'), missed: message !== '' }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(lastJson(result.stdout)).toEqual({ set: "pool by mylib", mentionsSet: false, missed: true });
    expect(result.stderr).not.toContain("[identity]");
    expect(result.code).toBe(0);
  });
});

describe(`an override by another registry (Node ${nodeVersion}, ${mode})`, () => {
  // Before, the overridden registration stayed "applied" in the report, into the table that held
  // the other registry's implementation; within one registry it is "superseded".
  it("the overridden registration is superseded in the report while the override stands, and applied again once it is disposed", async () => {
    const dir = makeTree({
      ...tensorkit(),
      "package.json": app([]),
      "main.mjs": [
        'import { createRegistry, register, registry } from "dispatch-hook";',
        'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
        "class Pool {}",
        'register("cpu", Pool, () => "pool by default");',
        'const other = createRegistry({ name: "other" });',
        'const handle = other.register("cpu", Pool, () => "pool by other", { override: true });',
        "const states = () => registry.verify().registrations.filter((r) => r.op === 'Pool').map((r) => (r.registry ?? '') + ':' + r.state + ':' + r.tables.length);",
        "const during = { answer: cpuTable.resolve(new Pool())(), states: states(), ok: registry.verify().ok };",
        "handle.dispose();",
        "const after = { answer: cpuTable.resolve(new Pool())(), states: states(), ok: registry.verify().ok };",
        "console.log(JSON.stringify({ during, after }));",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(lastJson(result.stdout)).toEqual({
      during: { answer: "pool by other", states: ["default:superseded:0"], ok: true },
      after: { answer: "pool by default", states: ["default:applied:1"], ok: true },
    });
    expect(result.code).toBe(0);
  });
});

describe(`a registration module that awaits at top level keeps its window (Node ${nodeVersion}, ${mode})`, () => {
  // The reference is a synchronous registration module: what the audit says for it, it must say
  // for one that awaits before it registers.
  for (const [label, wait] of Object.entries(withReference)) {
    it(`a registration made ${label} is the plugin's (origin kit-ops, via hook) in the report and the exit audit`, async () => {
      const dir = makeTree({
        ...tensorkit(),
        ...cpuPlugin("kit-ops", registersConv(wait)),
        "package.json": app(["kit-ops"]),
        "main.mjs": reportCpu,
      });
      const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
      expect(lastJson(result.stdout)).toEqual({
        first: { conv: true, pool: false },
        conv: "conv on cpu",
        registrations: ["Conv:applied:hook:kit-ops"],
        outside: [],
        plugins: ["kit-ops:loaded"],
        problems: [],
      });
      expect(result.stderr).toMatch(/Conv\s+applied\s+hook\s+node_modules\/kit-ops\/reg\/cpu\.js:\d+ \(kit-ops\)/);
      expect(result.stderr).toContain("ok: every registration landed");
      expect(result.code).toBe(0);
    });
  }

  it("a registration made after awaiting an already settled promise, while another plugin's registration module runs, is attributed to its own plugin, not to the one that ran next", async () => {
    const dir = makeTree({
      ...tensorkit(),
      ...cpuPlugin("kit-ops", registersConv(awaits["after awaiting an already settled promise"])),
      ...cpuPlugin("more-ops", registersPool),
      "package.json": app(["kit-ops", "more-ops"]),
      "main.mjs": reportCpu,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    const out = lastJson(result.stdout) as { registrations: string[] };
    expect(out.registrations.sort()).toEqual(["Conv:applied:hook:kit-ops", "Pool:applied:hook:more-ops"]);
    expect(result.stderr).toMatch(/Conv\s+applied\s+hook\s+node_modules\/kit-ops\/reg\/cpu\.js:\d+ \(kit-ops\)/);
    expect(result.code).toBe(0);
  });

  it("an entry written directly after an await, while another plugin's registration module awaits longer, is the writer's alone", async () => {
    const waitsLonger =
      'import { cpuTable } from "tensorkit/backends/cpu/table.js";\nawait new Promise((resolve) => setTimeout(resolve, 80));\n';
    const dir = makeTree({
      ...tensorkit(),
      ...cpuPlugin("kit-ops", writesConv(awaits["after awaiting a timer"])),
      ...cpuPlugin("more-ops", waitsLonger),
      "package.json": app(["kit-ops", "more-ops"]),
      "main.mjs": reportCpu,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(lastJson(result.stdout)).toMatchObject({ conv: "conv on cpu", outside: ["Conv by kit-ops"] });
    expect(result.stderr).toContain("1 entry was written into tables directly");
    expect(result.code).toBe(0);
  });

  it("an entry written directly between two awaits is the writer's, though another plugin's module finishes before the writer's does", async () => {
    const writesThenWaits = writesConv(awaits["after awaiting a timer"]).replace(
      'cpuTable.register(Conv, () => "conv on cpu");',
      'cpuTable.register(Conv, () => "conv on cpu");\nawait new Promise((resolve) => setTimeout(resolve, 80));',
    );
    const waits = 'import { cpuTable } from "tensorkit/backends/cpu/table.js";\nawait new Promise((resolve) => setTimeout(resolve, 40));\n';
    const dir = makeTree({
      ...tensorkit(),
      ...cpuPlugin("kit-ops", writesThenWaits),
      ...cpuPlugin("more-ops", waits),
      "package.json": app(["kit-ops", "more-ops"]),
      "main.mjs": reportCpu,
    });
    const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(lastJson(result.stdout)).toMatchObject({ conv: "conv on cpu", outside: ["Conv by kit-ops"] });
    expect(result.code).toBe(0);
  });

  // A registration module that loads the dispatch module it is for with import(): that import
  // waited for the module's facade, which waits for the registration module (Node exited with 13,
  // "unsettled top-level await", and the audit said the window was still awaiting).
  const loadsItsTable = {
    "writes into the table it loaded with import()": {
      lines: [
        'import { Conv } from "../ops.js";',
        'const { cpuTable } = await import("tensorkit/backends/cpu/table.js");',
        'cpuTable.register(Conv, () => "conv on cpu");',
      ],
      audit: { registrations: [], outside: ["Conv by kit-ops"] },
    },
    "registers once it has loaded the table with import()": {
      lines: [
        'import { register } from "dispatch-hook";',
        'import { Conv } from "../ops.js";',
        'await import("tensorkit/backends/cpu/table.js");',
        'register("cpu", Conv, () => "conv on cpu");',
      ],
      audit: { registrations: ["Conv:applied:hook:kit-ops"], outside: [] },
    },
  };
  for (const [label, { lines, audit }] of Object.entries(loadsItsTable)) {
    it(`a registration module that ${label} does not hang the app: the entry lands before the importer runs, and is kit-ops's`, async () => {
      const dir = makeTree({
        ...tensorkit(),
        ...cpuPlugin("kit-ops", [...lines, ""].join("\n")),
        "package.json": app(["kit-ops"]),
        "main.mjs": reportCpu,
      });
      const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
      expect(lastJson(result.stdout)).toEqual({
        first: { conv: true, pool: false },
        conv: "conv on cpu",
        ...audit,
        plugins: ["kit-ops:loaded"],
        problems: [],
      });
      expect(result.code).toBe(0);
    });
  }

  // A write goes into the instance the registration module names (a plain import: the plain instance), as without the
  // loader; a registration through the registry reaches every instance (truth.test.ts, 4b).
  for (const [label, { lines }] of Object.entries(loadsItsTable).filter(([label]) => label.startsWith("registers"))) {
    it(`a registration module that ${label}, where the app's first instance of the dispatch module is a ?v=1 one: no hang, and the registration lands in that instance`, async () => {
      // Before: it hung (exit code 13).
      const dir = makeTree({
        ...tensorkit(),
        ...cpuPlugin("kit-ops", [...lines, ""].join("\n")),
        "package.json": app(["kit-ops"]),
        "main.mjs": [
          'const { cpuTable } = await import("tensorkit/backends/cpu/table.js?v=1");',
          'const { Conv } = await import("kit-ops/ops.js");',
          "console.log(JSON.stringify({ conv: cpuTable.resolve(new Conv())() }));",
        ].join("\n"),
      });
      const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
      expect(lastJson(result.stdout)).toEqual({ conv: "conv on cpu" });
      expect(result.code).toBe(0);
    });
  }

  for (const [label, wait] of Object.entries(awaits)) {
    it(`a registration made ${label} lands before any importer of the dispatch module runs a line (with the next plugin's registration)`, async () => {
      const dir = makeTree({
        ...tensorkit(),
        ...cpuPlugin("kit-ops", registersConv(wait)),
        ...cpuPlugin("more-ops", registersPool),
        "package.json": app(["kit-ops", "more-ops"]),
        // Three importers: the entry (static), a module it imports, and a dynamic import().
        "importer.mjs":
          'import { cpuTable } from "tensorkit/backends/cpu/table.js";\nimport { Conv, Pool } from "kit-ops/ops.js";\nexport const seen = { conv: cpuTable.has(Conv), pool: cpuTable.has(Pool) };\n',
        "main.mjs": [
          'import { seen } from "./importer.mjs";',
          reportCpu,
          'const later = await import("./importer.mjs?later");',
          "console.log(JSON.stringify({ seen, later: later.seen }));",
        ].join("\n"),
      });
      const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
      const lines = result.stdout.trim().split("\n");
      expect(JSON.parse(lines[0] as string)).toMatchObject({ first: { conv: true, pool: true }, conv: "conv on cpu" });
      expect(lastJson(result.stdout)).toEqual({ seen: { conv: true, pool: true }, later: { conv: true, pool: true } });
      expect(result.code).toBe(0);
    });
  }

  for (const addThrough of ["table", "registry"] as const) {
    const framework = addThrough === "table" ? "written into its table" : "registered through dispatch-hook";
    for (const [label, wait] of Object.entries(withReference)) {
      it(`a conflict made ${label} with the framework's own Add (${framework}) is contained: the import does not throw, and the audit records kit-ops's refusal`, async () => {
        const dir = makeTree({
          ...tensorkit(addThrough),
          ...cpuPlugin(
            "kit-ops",
            [
              'import { register } from "dispatch-hook";',
              'import { Add } from "tensorkit";',
              wait,
              'register("cpu", Add, () => "add by kit-ops");',
              "",
            ].join("\n"),
          ),
          "package.json": app(["kit-ops"]),
          "main.mjs": [
            "let error = null;",
            "let add = null;",
            'try { const { cpuTable } = await import("tensorkit/backends/cpu/table.js"); const { Add } = await import("tensorkit/helper.js"); add = cpuTable.resolve(new Add())(); } catch (e) { error = e.code ?? String(e); }',
            'const { registry } = await import("dispatch-hook");',
            "const r = registry.verify();",
            "console.log(JSON.stringify({ error, add, refused: r.registrations.filter((x) => x.state === 'refused').map((x) => x.op + ':' + (x.error?.code ?? '-') + ':' + (x.origin?.plugin ?? 'no plugin')), plugins: r.plugins.map((p) => p.plugin + ':' + p.state), problems: r.problems.map((p) => p.kind) }));",
          ].join("\n"),
        });
        const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
        expect(lastJson(result.stdout)).toEqual({
          error: null,
          add: "add on cpu",
          refused: ["Add:ERR_DISPATCH_CONFLICT:kit-ops"],
          plugins: ["kit-ops:loaded"],
          problems: ["conflict"],
        });
        expect(result.stderr).toContain("(a declarative registration of kit-ops, from");
        expect(result.stderr).not.toContain("did not finish evaluating");
        // Strict fails on the refusal, as it does for a synchronous module.
        expect(result.code).toBe(1);
      });
    }
  }

  const neighbours = { alone: [], "followed by another plugin's registration module": ["more-ops"] } as const;
  for (const [label, wait] of Object.entries(withReference)) {
    for (const [placement, others] of Object.entries(neighbours)) {
      it(`a direct write into the table made ${label}, ${placement}, is audited as kit-ops's write outside the registry`, async () => {
        const dir = makeTree({
          ...tensorkit(),
          ...cpuPlugin("kit-ops", writesConv(wait)),
          ...(others.length > 0 ? cpuPlugin("more-ops", registersPool) : {}),
          "package.json": app(["kit-ops", ...others]),
          "main.mjs": reportCpu,
        });
        const result = await run(dir, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
        const out = lastJson(result.stdout);
        expect(out).toMatchObject({
          conv: "conv on cpu",
          registrations: others.length > 0 ? ["Pool:applied:hook:more-ops"] : [],
          outside: ["Conv by kit-ops"],
          problems: [],
        });
        expect(result.stderr).toMatch(/Conv\s+applied\s+outside\s+added by .*kit-ops\/reg\/cpu\.js, outside the registry \(kit-ops\)/);
        expect(result.code).toBe(0);
      });
    }
  }
});

describe(`a CommonJS framework whose entry re-exports its dispatch module (Node ${nodeVersion}, ${mode})`, () => {
  // cjskit's main is `module.exports = require("./dispatch/numba.js")`; the dispatch module is
  // watched, and ml-ops declares a registration module for numba (and expects PoolLayer there).
  const tree = (main: string) =>
    makeTree({
      ...linked,
      "node_modules/cjskit/package.json": JSON.stringify({
        name: "cjskit",
        main: "./index.js",
        dependencies: { "dispatch-hook": "*" },
        dispatchHook: { backends: { "*": { module: "./dispatch/{backend}.js", export: "{backend}Table" } } },
      }),
      "node_modules/cjskit/index.js": 'module.exports = require("./dispatch/numba.js");\n',
      "node_modules/cjskit/dispatch/numba.js":
        'const { Dispatcher } = require("dispatch-hook");\nexports.numbaTable = new Dispatcher({ name: "numbaTable", backend: "numba" });\n',
      "node_modules/ml-ops/package.json": JSON.stringify({
        name: "ml-ops",
        type: "module",
        exports: { ".": "./index.js", "./*": "./*" },
        dependencies: { cjskit: "*", "dispatch-hook": "*" },
        dispatchHook: { registrations: { numba: "./dispatch/numba.js" }, expects: { numba: ["PoolLayer"] } },
      }),
      "node_modules/ml-ops/index.js": 'export class PoolLayer {}\nexport const poolNumba = () => "pooled";\n',
      "node_modules/ml-ops/dispatch/numba.js":
        'import { register } from "dispatch-hook";\nimport { PoolLayer, poolNumba } from "../index.js";\nregister("numba", PoolLayer, poolNumba);\n',
      "package.json": appJson({ type: "module", dependencies: { cjskit: "*", "ml-ops": "*", "dispatch-hook": "*" } }),
      "main.mjs": main,
    });
  const call =
    "let landed; try { landed = numbaTable.resolve(new PoolLayer())(); } catch (e) { landed = e.code; }\nconsole.log(JSON.stringify({ landed }));";
  const imports = {
    "a static import": `import { numbaTable } from "cjskit";\nimport { PoolLayer } from "ml-ops";\n${call}`,
    "a dynamic import()": `const { numbaTable } = await import("cjskit");\nconst { PoolLayer } = await import("ml-ops");\n${call}`,
  };

  for (const [how, main] of Object.entries(imports)) {
    if (mode === "registerHooks") {
      it(`imported from an ES module app by ${how}: the registration modules run, the registration lands, and the strict audit passes`, async () => {
        const result = await run(tree(main), ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
        expect(lastJson(result.stdout)).toEqual({ landed: "pooled" });
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
      });
    } else {
      // module.register hooks never see require(), so the dispatch module cannot be served here:
      // the audit must name that limit rather than report a module that never finished.
      it(`imported from an ES module app by ${how}: the strict audit names the require() limit of the register hooks`, async () => {
        const result = await run(tree(main), ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
        expect(lastJson(result.stdout)).toEqual({ landed: "ERR_DISPATCH_NO_IMPL" });
        expect(result.stderr).toMatch(/dispatch\/numba\.js was loaded with require\(\), which the register hooks of Node \d/);
        expect(result.stderr).not.toContain("never finished evaluating");
        // The backends line agrees with the problem: loaded, but never signalled.
        expect(result.stderr).toContain("numba loaded, never signalled (see below)");
        expect(result.code).toBe(1);
      });
    }
  }
});

describe(`one namespace per module: import() and require() of a watched ES dispatch module (Node ${nodeVersion}, ${mode})`, () => {
  /** Prints whether import() and require() gave the same namespace, in both orders. */
  const compare = [
    'import { createRequire } from "node:module";',
    "const require = createRequire(import.meta.url);",
    "const [importFirst, requireFirst] = process.argv.slice(2);",
    "const a = await import(importFirst);",
    "const b = require(importFirst);",
    "const c = require(requireFirst);",
    "const d = await import(requireFirst);",
    "console.log(JSON.stringify({ importThenRequire: a === b, requireThenImport: c === d, table: Object.keys(a) }));",
    "",
  ].join("\n");

  async function same(dir: string, importFirst: string, requireFirst: string, table: string) {
    const plain = await run(dir, ["main.mjs", importFirst, requireFirst]);
    const expected = { importThenRequire: true, requireThenImport: true, table: [table] };
    expect(lastJson(plain.stdout)).toEqual(expected);
    const hooked = await run(dir, ["--import", loader, "main.mjs", importFirst, requireFirst], { DISPATCH_HOOK_AUDIT: "report" });
    expect(lastJson(hooked.stdout)).toEqual(expected);
    expect(hooked.stderr).not.toContain("problem(s)");
    expect(hooked.code).toBe(0);
  }

  // module.register's hooks (Node 20) never see require(): there, require() of a watched ES module
  // gets the module itself and import() its facade, two namespaces over one module instance
  // (notes/node-versions.md). Registrations still land through whichever import comes.
  it.skipIf(!features.requireModule || mode === "register")(
    "a .js dispatch module, with and without a plugin's registration module: the very same namespace object, as without the loader",
    async () => {
      const dir = makeTree({
        ...tensorkit(),
        ...cpuPlugin("kit-ops", registersConv("")),
        "package.json": app(["kit-ops"]),
        "main.mjs": compare,
      });
      // cpu has kit-ops's registration module; gpu has none. Each is loaded first by import() in one run and by require() in the other.
      await same(dir, "tensorkit/backends/cpu/table.js", "tensorkit/backends/gpu/table.js", "cpuTable");
      await same(dir, "tensorkit/backends/gpu/table.js", "tensorkit/backends/cpu/table.js", "gpuTable");
    },
  );

  it.skipIf(!features.requireModule || !features.typescript)(
    "a .mts dispatch module (type stripping), with a plugin's registration modules: the very same namespace object, as without the loader",
    async () => {
      // Each backend has a registration module, so each gets a facade, whose original require() loaded without its types stripped.
      const registers = (backend: string) => `import { register } from "dispatch-hook";\nregister("${backend}", class Op {}, () => 1);\n`;
      const dir = makeTree({
        ...linked,
        "node_modules/ts-ops/package.json": JSON.stringify({
          name: "ts-ops",
          type: "module",
          dispatchHook: { registrations: { tpu: "./tpu.js", npu: "./npu.js" } },
        }),
        "node_modules/ts-ops/tpu.js": registers("tpu"),
        "node_modules/ts-ops/npu.js": registers("npu"),
        // Type stripping does not apply under node_modules: the app's own TypeScript backends.
        "package.json": appJson({
          type: "module",
          dependencies: { "dispatch-hook": "*", "ts-ops": "*" },
          dispatchHook: { backends: { "*": { module: "./src/{backend}.mts", export: "{backend}Table" } } },
        }),
        "src/tpu.mts":
          'import { Dispatcher } from "dispatch-hook";\nexport const tpuTable: Dispatcher = new Dispatcher({ name: "tpuTable", backend: "tpu" });\n',
        "src/npu.mts":
          'import { Dispatcher } from "dispatch-hook";\nexport const npuTable: Dispatcher = new Dispatcher({ name: "npuTable", backend: "npu" });\n',
        "main.mjs": compare,
      });
      await same(dir, "./src/tpu.mts", "./src/npu.mts", "tpuTable");
    },
  );
});

/** What a collection scenario counts with: objects collected, and `settle()`, which lets collections and their callbacks run. */
const collecting = [
  "let collected = 0;",
  "const finalization = new FinalizationRegistry(() => { collected++; });",
  "const settle = async () => { for (let i = 0; i < 10; i++) { globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 10)); } };",
];

describe(`dropped registries are collected (Node ${nodeVersion}, ${mode})`, () => {
  // 10,000 registries, each with a table of its own and one registration that lands in it, all
  // dropped. A FinalizationRegistry counts those collected; the heap is measured around it.
  const main = [
    'import { createRegistry, Dispatcher } from "dispatch-hook";',
    "const count = 10_000;",
    ...collecting,
    "class PoolLayer {}",
    "let applied = 0;",
    "function make() {",
    "  for (let i = 0; i < count; i++) {",
    "    const registry = createRegistry();",
    '    const table = i % 2 === 0 ? new Map() : new Dispatcher({ backend: "numba" });',
    '    registry.provide("numba", table);',
    '    if (registry.register("numba", PoolLayer, () => i).state === "applied") applied++;',
    "    finalization.register(registry, i);",
    "  }",
    "}",
    "await settle();",
    "const before = process.memoryUsage().heapUsed;",
    "make();",
    "await settle();",
    "const after = process.memoryUsage().heapUsed;",
    "console.log(JSON.stringify({ count, applied, collected, heapLeftBehind: after - before }));",
    "",
  ].join("\n");

  for (const withLoader of [false, true]) {
    it(`10,000 registries whose registrations landed, then dropped: nearly all are collected and under 1 MB of heap is left behind (${withLoader ? "under the loader" : "without the loader"})`, async () => {
      const dir = makeTree({
        ...linked,
        "package.json": appJson({ type: "module", dependencies: { "dispatch-hook": "*" } }),
        "main.mjs": main,
      });
      const result = await run(dir, ["--expose-gc", ...(withLoader ? ["--import", loader] : []), "main.mjs"]);
      const out = lastJson(result.stdout) as { count: number; applied: number; collected: number; heapLeftBehind: number };
      expect(out.applied).toBe(out.count);
      expect(out.collected, JSON.stringify(out)).toBeGreaterThanOrEqual(out.count * 0.99);
      expect(out.heapLeftBehind, JSON.stringify(out)).toBeLessThan(1024 * 1024);
      expect(result.code).toBe(0);
    });
  }
});

describe(`a registry's audit log, kept, does not keep the registry (Node ${nodeVersion}, ${mode})`, () => {
  // 200 registries, each with a table and a registration that lands in it; only their audit logs
  // are kept (the log stays readable after dispose()), half of the registries disposed. The logs
  // must not keep their registries: a registry holds its implementations, its tables' records, and,
  // undisposed, keeps landing its registrations in tables announced later.
  const main = [
    'import { createRegistry } from "dispatch-hook";',
    "const count = 200;",
    ...collecting,
    "class PoolLayer {}",
    "const logs = [];",
    "function make() {",
    "  for (let i = 0; i < count; i++) {",
    "    const registry = createRegistry();",
    '    registry.provide("numba", new Map());',
    '    registry.register("numba", PoolLayer, () => i);',
    "    if (i % 2 === 0) registry.dispose();",
    "    logs.push(registry.audit);",
    "    finalization.register(registry, i);",
    "  }",
    "}",
    "make();",
    "await settle();",
    "const readable = logs.every((log) => log.events().some((e) => e.kind === 'applied' && e.op === 'PoolLayer'));",
    "console.log(JSON.stringify({ count, collected, readable }));",
    "",
  ].join("\n");

  it("200 registries whose logs are kept, half of them disposed: the registries are collected, the logs stay readable", async () => {
    const dir = makeTree({
      ...linked,
      "package.json": appJson({ type: "module", dependencies: { "dispatch-hook": "*" } }),
      "main.mjs": main,
    });
    const result = await run(dir, ["--expose-gc", "main.mjs"]);
    const out = lastJson(result.stdout) as { count: number; collected: number; readable: boolean };
    expect(out.readable).toBe(true);
    expect(out.collected, JSON.stringify(out)).toBeGreaterThanOrEqual(out.count * 0.99);
    expect(result.code).toBe(0);
  });
});

describe(`dropped tables are collected (Node ${nodeVersion}, ${mode})`, () => {
  // One registry that lives, with a registration for the backend; 2,000 tables announced for it (a
  // Map made per test, a module instance a test runner drops), each dropped at once. The registration
  // lands in each, and the registry must not keep them.
  const main = [
    'import { announce, createRegistry, Dispatcher } from "dispatch-hook";',
    "const count = 2_000;",
    ...collecting,
    "class PoolLayer {}",
    "const registry = createRegistry();",
    'registry.register("dropped", PoolLayer, () => 1);',
    "let applied = 0;",
    "for (let i = 0; i < count; i++) {",
    '  const table = i % 2 === 0 ? new Map() : new Dispatcher({ backend: "dropped" });',
    '  announce("dropped", table);',
    "  if (typeof (table.get(PoolLayer)) === 'function') applied++;",
    "  finalization.register(table, i);",
    "}",
    "await settle();",
    // What landed landed: a collected table is not a withdrawn one, and nothing is wrong, even for a
    // registry whose only table was collected.
    "const lone = createRegistry();",
    'lone.register("dropped-lone", PoolLayer, () => 2);',
    "let loneCollected = false;",
    "const loneWatch = new FinalizationRegistry(() => { loneCollected = true; });",
    '(() => { const t = new Map(); announce("dropped-lone", t); loneWatch.register(t, 0); })();',
    "await settle();",
    "const dropped = lone.verify();",
    "const last = new Map();",
    'announce("dropped", last);',
    "const report = registry.verify();",
    "console.log(JSON.stringify({ count, applied, collected, afterDrop: [loneCollected, dropped.registrations[0]?.state, dropped.ok, dropped.backends.find((b) => b.backend === 'dropped-lone')?.loaded], stillApplied: report.registrations[0]?.state, lands: typeof last.get(PoolLayer) }));",
    "",
  ].join("\n");

  it("2,000 tables a living registry wrote into, then dropped: nearly all are collected, and the registration still lands in the next", async () => {
    const dir = makeTree({
      ...linked,
      "package.json": appJson({ type: "module", dependencies: { "dispatch-hook": "*" } }),
      "main.mjs": main,
    });
    const result = await run(dir, ["--expose-gc", "main.mjs"]);
    const out = lastJson(result.stdout) as {
      count: number;
      applied: number;
      collected: number;
      afterDrop: unknown[];
      stillApplied: string;
      lands: string;
    };
    expect(out.applied).toBe(out.count);
    expect(out.collected, JSON.stringify(out)).toBeGreaterThanOrEqual(out.count * 0.99);
    expect([out.stillApplied, out.lands]).toEqual(["applied", "function"]);
    expect(out.afterDrop).toEqual([true, "applied", true, true]);
    expect(result.code).toBe(0);
  });
});

describe(`restore() keeps what a plugin's registration module expects (Node ${nodeVersion}, ${mode})`, () => {
  // A harness snapshots, the backend loads during the "test" (its plugin's module runs once and names
  // an op type it must have), then the harness restores: the plugin's registrations stay, and so must
  // what it expects, or a miss it names is forgotten for good. A test's own expect() is taken back.
  it("a plugin's expect() survives a restore, the app's own is taken back", async () => {
    const dir = makeTree({
      ...tensorkit(),
      ...cpuPlugin(
        "kit-ops",
        [
          'import { register, registry } from "dispatch-hook";',
          'import { Conv } from "../ops.js";',
          'register("cpu", Conv, () => "conv on cpu");',
          'registry.expect("cpu", ["Conv", "Pool"]);',
          "",
        ].join("\n"),
      ),
      "package.json": app(["kit-ops"]),
      "main.mjs": [
        'import { registry } from "dispatch-hook";',
        "const before = registry.snapshot();",
        'registry.expect("cpu", ["Relu"]);',
        'const { cpuTable } = await import("tensorkit/backends/cpu/table.js");',
        'const missing = () => registry.verify().problems.filter((p) => p.kind === "missing").map((p) => p.op).sort();',
        "const during = missing();",
        "registry.restore(before);",
        'const { Conv } = await import("kit-ops/ops.js");',
        "console.log(JSON.stringify({ during, after: missing(), conv: cpuTable.resolve(new Conv())() }));",
        "",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "main.mjs"]);
    expect(lastJson(result.stdout), result.stderr).toEqual({ during: ["Pool", "Relu"], after: ["Pool"], conv: "conv on cpu" });
  });
});

describe(`a CommonJS dispatch module loaded again after require.cache let it go (Node ${nodeVersion}, ${mode})`, () => {
  // As a watch-mode reload, decache or clear-module do: each load's table gets the plugin's Conv, and
  // the first load's table is collected before the exit audit. Written from a review: the audit said the
  // module "was loaded but never finished evaluating", and strict failed a program where everything landed.
  it.skipIf(mode !== "registerHooks")("the strict audit passes once the first load's table is collected", async () => {
    const dir = makeTree({
      ...linked,
      "package.json": appJson({ dependencies: { tk: "*", pa: "*", "dispatch-hook": "*" } }),
      "node_modules/tk/package.json": JSON.stringify({
        name: "tk",
        exports: { "./*": "./*" },
        dispatchHook: { backends: { cjs: { module: "./backends/cjs.cjs", export: "table" } } },
      }),
      "node_modules/tk/backends/cjs.cjs":
        'const { Dispatcher } = require("dispatch-hook");\nexports.table = new Dispatcher({ name: "cjs table", backend: "cjs" });\n',
      "node_modules/tk/ops.cjs": "class Conv {}\nexports.Conv = Conv;\n",
      "node_modules/pa/package.json": JSON.stringify({
        name: "pa",
        exports: { "./*": "./*" },
        dispatchHook: { registrations: { cjs: "./reg.cjs" }, expects: { cjs: ["Conv"] } },
      }),
      "node_modules/pa/reg.cjs":
        'const { register } = require("dispatch-hook");\nconst { Conv } = require("tk/ops.cjs");\nregister("cjs", Conv, () => "conv on cjs");\n',
      "main.cjs": [
        'const { Conv } = require("tk/ops.cjs");',
        'const path = require.resolve("tk/backends/cjs.cjs");',
        "const seen = [];",
        "let collected = 0;",
        "const finalization = new FinalizationRegistry(() => { collected++; });",
        "function load() {",
        "  const { table } = require(path);",
        "  seen.push(table.resolve(new Conv())());",
        "  finalization.register(table, seen.length);",
        "  delete require.cache[path];",
        "  module.children.length = 0; // what clear-module does: the parent's list would keep it",
        "}",
        "load();",
        "load();",
        "(async () => {",
        "  for (let i = 0; i < 10; i++) { globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 10)); }",
        "  console.log(JSON.stringify({ seen, collected }));",
        "})();",
        "",
      ].join("\n"),
    });
    const result = await run(dir, ["--expose-gc", "--import", loader, "main.cjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    const out = lastJson(result.stdout) as { seen: string[]; collected: number };
    expect(out.seen).toEqual(["conv on cjs", "conv on cjs"]);
    expect(out.collected).toBeGreaterThanOrEqual(1);
    expect(result.stderr).not.toContain("never finished evaluating");
    expect(result.code).toBe(0);
  });
});

describe(`a dropped registry that recorded an expectation or a problem (Node ${nodeVersion}, ${mode})`, () => {
  // Written from a review: any expect() or recorded problem held the whole registry for good, so a
  // suite that makes a registry per test, each with an expect(), kept 4.4 KB per test (the second
  // row here measured 4,430 bytes per registry). The thread's audit keeps the log instead.
  const main = [
    'import { announce, createRegistry, Dispatcher, threadAudit } from "dispatch-hook";',
    "const names = new Set();",
    "const finalization = new FinalizationRegistry((name) => names.add(name));",
    "const settle = async () => { for (let i = 0; i < 10; i++) { globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 10)); } };",
    "class Conv {}",
    "class Pool {}",
    "class Mish {}",
    'const table = new Dispatcher({ name: "t1", backend: "b1" });',
    'announce("b1", table);',
    'table.register(Pool, () => "the framework\'s pool");',
    // Registered through a helper closure: with the audit on, a captured call stack held its frame, and the frame the
    // registry. (The implementation is made outside: one made beside the helper would hold the registry itself.)
    'const conv = () => "conv";',
    "function throughHelper() {",
    '  const met = createRegistry(); const add = (op, impl) => met.register("b1", op, impl); add(Conv, conv); met.expect("b1", ["Conv"]); finalization.register(met, "expectation met");',
    "}",
    "throughHelper();",
    "(() => {",
    '  const gone = createRegistry(); gone.register("b1", Mish, () => "mish"); gone.expect("b1", ["Mish"]); finalization.register(gone, "expectation met, then its entry removed");',
    "  const restored = createRegistry(); const before = restored.snapshot();",
    '  try { restored.register("b1", Pool, () => 1); } catch {}',
    '  restored.restore(before); finalization.register(restored, "refusal taken back by restore()");',
    '  const unmet = createRegistry(); unmet.expect("b1", ["Relu"]); finalization.register(unmet, "expectation unmet");',
    "})();",
    "table.unregister(Mish);",
    "await settle();",
    "const audit = threadAudit();",
    "const heap = process.memoryUsage().heapUsed;",
    'for (let i = 0; i < 20_000; i++) createRegistry().expect("b1", ["Conv"]);',
    "await settle();",
    "const perRegistry = (process.memoryUsage().heapUsed - heap) / 20_000;",
    "console.log(JSON.stringify({ collected: [...names].sort(), problems: audit.problems.map((p) => `${p.kind} ${p.op}`).sort(), landed: table.has(Conv), perRegistry }));",
    "",
  ].join("\n");

  for (const audit of ["", "report"]) {
    it(`it is collected, while the thread's audit still reports what it expected; 20,000 such registries keep under 1.5 KB each (${audit === "" ? "no audit running" : "an audit running: call sites captured"})`, async () => {
      const dir = makeTree({
        ...linked,
        "package.json": appJson({ type: "module", dependencies: { "dispatch-hook": "*" } }),
        "main.mjs": main,
      });
      const result = await run(dir, ["--expose-gc", "main.mjs"], { DISPATCH_HOOK_AUDIT: audit });
      const out = lastJson(result.stdout) as { collected: string[]; problems: string[]; landed: boolean; perRegistry: number };
      expect(out.collected).toEqual([
        "expectation met",
        "expectation met, then its entry removed",
        "expectation unmet",
        "refusal taken back by restore()",
      ]);
      // The unmet expectation of a collected registry still fails the audit, and so does one whose entry code outside
      // the registry removed (its log says applied; the table, asked, no longer holds it: a review found it said ok).
      expect(out.problems).toEqual(["missing Mish", "missing Relu"]);
      expect(out.landed).toBe(true);
      expect(out.perRegistry, JSON.stringify(out)).toBeLessThan(1536);
      expect(result.code).toBe(0);
    });
  }

  it("with an audit running, one that registered through a helper closure is collected too (its kept log holds call sites as text, not the captured frames)", async () => {
    const dir = makeTree({
      ...linked,
      "package.json": appJson({ type: "module", dependencies: { "dispatch-hook": "*" } }),
      "main.mjs": [
        'import { announce, createRegistry, Dispatcher } from "dispatch-hook";',
        "const names = new Set();",
        "const finalization = new FinalizationRegistry((name) => names.add(name));",
        "const settle = async () => { for (let i = 0; i < 10; i++) { globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 10)); } };",
        "class Conv {}",
        'const table = new Dispatcher({ name: "t1", backend: "b1" });',
        'announce("b1", table);',
        'const conv = () => "conv";',
        "function throughHelper() {",
        '  const met = createRegistry(); const add = (op, impl) => met.register("b1", op, impl); add(Conv, conv); met.expect("b1", ["Conv"]);',
        '  finalization.register(met, "expectation met");',
        "}",
        "throughHelper();",
        "await settle();",
        "console.log(JSON.stringify({ collected: [...names] }));",
        "",
      ].join("\n"),
    });
    const result = await run(dir, ["--expose-gc", "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(lastJson(result.stdout)).toEqual({ collected: ["expectation met"] });
  });
});
