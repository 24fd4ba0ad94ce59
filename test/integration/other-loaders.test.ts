/**
 * Other loaders composed with ours, in either order: tsx, Node's own type stripping, and
 * import-in-the-middle's module.register() hook. Each runs a real app whose dispatch modules and
 * registration modules are TypeScript (.ts, .mts and .cts) or plain JavaScript, and asserts that
 * every table answers what its plugin registered and that the strict exit audit is clean.
 *
 * Written when tsx on Node 20 crashed with ERR_UNKNOWN_FILE_EXTENSION as soon as a .ts dispatch
 * module with a registration module loaded under our loader, in both --import orders.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { lastJson, loader, makeTree, nodeBinary, nodeVersion, type Run, repoRoot, run } from "./fixture.js";
import { iitmApp, typescriptWorkspace } from "./trees.js";

const mode = hookMode(nodeVersion);

/** Whether the node binary under test strips TypeScript types by itself (22.18+, 24, 26). */
const typeStripping =
  execFileSync(nodeBinary, ["-p", "typeof process.features.typescript === 'string'"], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  }).trim() === "true";

const strict = { DISPATCH_HOOK_AUDIT: "strict" };

/** The JSON line the app printed last; a crash before it fails with what the process printed. */
function printed(result: Run): Record<string, unknown> {
  try {
    return lastJson(result.stdout);
  } catch {
    // Each line quoted: a line that reads as a stack frame sends Vitest looking for its source map.
    throw new Error(`the app printed no result (exit code ${result.code}); its stderr:\n${result.stderr.replace(/^/gm, "| ")}`);
  }
}

const everyTableAnswers = {
  answers: { cpu: "conv on cpu", gpu: "conv on gpu", tpu: "conv on tpu", npu: "conv on npu" },
  required: true,
  ok: true,
  checked: true,
  problems: [],
};

/** Strict found nothing to print (it prints only a problem) and nothing failed: stderr holds at most Node's own warnings. */
function cleanStrictAudit(stderr: string): void {
  expect(stderr).not.toContain("problem(s)");
  expect(stderr).not.toMatch(/Error|not landed|pending/);
}

describe(`tsx, a .cts dispatch module that another .cts module require()s (Node ${nodeVersion}, ${mode})`, () => {
  // On Node 20 tsx gives a .cts module's source to Node, whose require() calls in it then go through
  // the loader's hooks: a facade there (an ES module) crashed the app (ERR_REQUIRE_ESM on 20.16, a
  // link failure on 20.20) that ran without the loader. Where the hooks see require(), tsx's require()
  // goes around them: the module loads unseen there too. Either way the app runs as without the
  // loader, and the strict audit names the miss.
  const tree = {
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "node_modules/tsx": { symlink: join(repoRoot, "node_modules/tsx") },
    "node_modules/tsk/package.json": JSON.stringify({
      name: "tsk",
      dispatchHook: { backends: { tpu: { module: "./backends/tpu.cts", export: "table" } } },
    }),
    "node_modules/tsk/backends/tpu.cts":
      'const { Dispatcher } = require("dispatch-hook");\nconst table: unknown = new Dispatcher({ name: "tpu", backend: "tpu" });\nmodule.exports = { table };\n',
    "node_modules/tsk/load.cts": 'module.exports = function load(): any { return require("./backends/tpu.cts"); };\n',
    "node_modules/tops/package.json": JSON.stringify({
      name: "tops",
      type: "module",
      dispatchHook: { registrations: { tpu: "./tpu.js" } },
    }),
    "node_modules/tops/tpu.js":
      'import { register } from "dispatch-hook";\nexport class Conv {}\nregister("tpu", Conv, () => "conv on tpu");\n',
    "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { tsk: "*", tops: "*", "dispatch-hook": "*" } }),
    "app.ts":
      'import load from "tsk/load.cts";\nimport { Conv } from "tops/tpu.js";\nconst { table } = load();\nconsole.log(JSON.stringify({ landed: table.has(Conv) }));\n',
  };
  it("a .cjs file's import() of the dispatch module by its file URL still gets its facade, and the plugin lands (a first version took it for such a require())", async () => {
    const dir = makeTree({
      ...Object.fromEntries(Object.entries(tree).filter(([file]) => !file.endsWith(".cts"))),
      "node_modules/tsk/package.json": JSON.stringify({
        name: "tsk",
        dispatchHook: { backends: { tpu: { module: "./backends/tpu.js", export: "table" } } },
      }),
      "node_modules/tsk/backends/tpu.js":
        'const { Dispatcher } = require("dispatch-hook");\nexports.table = new Dispatcher({ name: "tpu", backend: "tpu" });\n',
      "app.cjs": [
        'const { pathToFileURL } = require("node:url");',
        "(async () => {",
        '  const { table } = await import(pathToFileURL(require.resolve("tsk/backends/tpu.js")).href);',
        '  const { Conv } = await import("tops/tpu.js");',
        "  console.log(JSON.stringify({ landed: table.has(Conv) }));",
        "})();",
      ].join("\n"),
    });
    const result = await run(dir, ["--import", loader, "app.cjs"], strict);
    expect(printed(result)).toEqual({ landed: true });
    expect(result.code).toBe(0);
  });

  for (const order of ["tsx first", "dispatch-hook first"] as const) {
    it(`${order}: the app runs as without the loader, and strict fails naming what was not seen`, async () => {
      const dir = makeTree(tree);
      const imports = order === "tsx first" ? ["--import", "tsx", "--import", loader] : ["--import", loader, "--import", "tsx"];
      const result = await run(dir, [...imports, "app.ts"], strict);
      expect(printed(result)).toEqual({ landed: false });
      expect(result.stderr).not.toMatch(/ERR_REQUIRE_ESM|not in cache/);
      expect(result.stderr).toContain("[pending] Conv on tpu");
      expect(result.code).toBe(1);
    });
  }
});

describe(`tsx composed with the loader (Node ${nodeVersion}, ${mode})`, () => {
  for (const order of ["tsx first", "dispatch-hook first"] as const) {
    it(`--import ${order === "tsx first" ? "tsx --import dispatch-hook/loader.mjs" : "dispatch-hook/loader.mjs --import tsx"}: .ts, .mts and .cts dispatch and registration modules are served and every registration lands`, async () => {
      const dir = makeTree(typescriptWorkspace);
      const imports = order === "tsx first" ? ["--import", "tsx", "--import", loader] : ["--import", loader, "--import", "tsx"];
      const result = await run(dir, [...imports, "main.ts"], strict);
      expect(result.stderr).not.toContain("ERR_UNKNOWN_FILE_EXTENSION");
      expect(printed(result)).toEqual(everyTableAnswers);
      cleanStrictAudit(result.stderr);
      expect(result.code).toBe(0);
    });
  }
});

describe(`Node's own type stripping with the loader (Node ${nodeVersion}, ${mode})`, () => {
  it.skipIf(!typeStripping)(
    "node --import dispatch-hook/loader.mjs main.ts: .ts, .mts and .cts modules run natively and every registration lands (skipped where process.features.typescript is absent: Node before 22.18)",
    async () => {
      const dir = makeTree(typescriptWorkspace);
      const result = await run(dir, ["--import", loader, "main.ts"], strict);
      expect(printed(result)).toEqual(everyTableAnswers);
      cleanStrictAudit(result.stderr);
      expect(result.code).toBe(0);
    },
  );
});

describe(`import-in-the-middle's hook composed with the loader (Node ${nodeVersion}, ${mode})`, () => {
  for (const order of ["import-in-the-middle first", "dispatch-hook first"] as const) {
    it(`${order}: both loaders do their work, and every registration lands`, async () => {
      const dir = makeTree(iitmApp);
      const imports =
        order === "import-in-the-middle first"
          ? ["--import", "./iitm.mjs", "--import", loader]
          : ["--import", loader, "--import", "./iitm.mjs"];
      const result = await run(dir, [...imports, "main.mjs"], strict);
      expect(printed(result)).toEqual({
        numba: "pooled",
        jax: "pooled on jax",
        cjs: "pooled",
        iitmSawNumba: true,
        ok: true,
        problems: [],
      });
      cleanStrictAudit(result.stderr);
      expect(result.code).toBe(0);
    });
  }
});
