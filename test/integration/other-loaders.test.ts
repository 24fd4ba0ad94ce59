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
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { lastJson, loader, makeTree, nodeBinary, nodeVersion, type Run, run } from "./fixture.js";
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

/** The exit audit's table went to stderr with no problem in it, and nothing else did but Node's own warnings. */
function cleanStrictAudit(stderr: string): void {
  expect(stderr).not.toContain("problem(s)");
  expect(stderr).not.toMatch(/Error|not landed|pending/);
}

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
