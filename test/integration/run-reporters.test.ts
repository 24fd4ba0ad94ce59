/**
 * The run-level reporters: a real Vitest (threads, forks, vmThreads) and a real Jest (workers),
 * each with two test files. When one file's worker loads a backend where the plugin's expected op
 * type never arrives, the run fails for that reason alone, naming that file; when it does not, the
 * run passes.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeTree, nodeBinary, repoRoot, run, type Tree } from "./fixture.js";

const vitestBin = join(repoRoot, "node_modules/vitest/vitest.mjs");
const jestBin = join(repoRoot, "node_modules/jest/bin/jest.js");
/** The runners' output without colour or interactive updates. */
const quiet = { CI: "1", NO_COLOR: "1" };
const cli = join(repoRoot, "dist/bundle/cli.js");

type Mode = "module" | "commonjs";

/** tensorkit (cpu and gpu backends) and kit-ops (registers Conv for cpu, and expects it on both). */
function project(mode: Mode): Tree {
  const cjs = mode === "commonjs";
  const table = (backend: string) =>
    cjs
      ? `const { Dispatcher } = require("dispatch-hook");\nexports.${backend}Table = new Dispatcher({ name: "${backend}Table", backend: "${backend}" });\n`
      : `import { Dispatcher } from "dispatch-hook";\nexport const ${backend}Table = new Dispatcher({ name: "${backend}Table", backend: "${backend}" });\n`;
  // Which backend b.test loads: gpu misses Conv, cpu does not.
  const test = (backend: string) =>
    cjs
      ? `const { ${backend}Table } = require("tensorkit/backends/${backend}/table.js");\ntest("loads ${backend}", () => { expect(${backend}Table).toBeTruthy(); });\n`
      : `import { expect, test } from "vitest";\nimport { ${backend}Table } from "tensorkit/backends/${backend}/table.js";\ntest("loads ${backend}", () => { expect(${backend}Table).toBeTruthy(); });\n`;
  return {
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "node_modules/tensorkit/package.json": JSON.stringify({
      name: "tensorkit",
      type: mode,
      dependencies: { "dispatch-hook": "*" },
      dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
    }),
    "node_modules/tensorkit/backends/cpu/table.js": table("cpu"),
    "node_modules/tensorkit/backends/gpu/table.js": table("gpu"),
    "node_modules/kit-ops/package.json": JSON.stringify({
      name: "kit-ops",
      type: mode,
      dependencies: { tensorkit: "*", "dispatch-hook": "*" },
      dispatchHook: { registrations: { cpu: "./reg/cpu.js" }, expects: { cpu: ["Conv"], gpu: ["Conv"] } },
    }),
    "node_modules/kit-ops/ops.js": cjs ? "exports.Conv = class Conv {};\n" : "export class Conv {}\n",
    "node_modules/kit-ops/reg/cpu.js": cjs
      ? 'const { register } = require("dispatch-hook");\nconst { Conv } = require("../ops.js");\nregister("cpu", Conv, () => "conv");\n'
      : 'import { register } from "dispatch-hook";\nimport { Conv } from "../ops.js";\nregister("cpu", Conv, () => "conv");\n',
    "package.json": JSON.stringify({ name: "app", type: mode, dependencies: { tensorkit: "*", "kit-ops": "*", "dispatch-hook": "*" } }),
    "a.test.js": test("cpu"),
    "b-miss.test.js": test("gpu"),
    "b-fine.test.js": test("cpu"),
  };
}

const vitestProject = (): Tree => ({
  ...project("module"),
  "node_modules/vitest": { symlink: join(repoRoot, "node_modules/vitest") },
  "node_modules/vite": { symlink: join(repoRoot, "node_modules/vite") },
  "vitest.config.mjs": [
    'import { dispatchHook } from "dispatch-hook/vite";',
    "export default {",
    "  plugins: [dispatchHook()],",
    '  test: { pool: process.env.POOL, include: ["a.test.js", process.env.B], reporters: ["default", "dispatch-hook/vitest/reporter"] },',
    "};",
  ].join("\n"),
});

const jestProject = (): Tree => ({
  ...project("commonjs"),
  "node_modules/jest": { symlink: join(repoRoot, "node_modules/jest") },
  "jest.config.json": JSON.stringify({
    testEnvironment: "node",
    resolver: "dispatch-hook/jest",
    reporters: ["default", "dispatch-hook/jest/reporter"],
  }),
});

describe("the Vitest reporter folds every worker's record, and fails the run on a miss", () => {
  const dir = makeTree(vitestProject());
  const vitest = (pool: string, b: string) => run(dir, [vitestBin, "run"], { POOL: pool, B: b, ...quiet });

  it.each(["threads", "forks", "vmThreads"])(
    "pool %s",
    async (pool) => {
      const missed = await vitest(pool, "b-miss.test.js");
      expect(missed.stdout).toMatch(/Tests\s+2 passed/);
      expect(missed.stdout).toContain("dispatch-hook audit");
      expect(missed.stdout).toContain("[missing] Conv on gpu was expected");
      expect(missed.stdout).toMatch(/^not ok: 1 problem\(s\) in 1 process\(es\)$/m);
      // The row of the worker that missed names its file (vmThreads runs both files in one realm: one record names both).
      expect(missed.stdout).toMatch(
        pool === "vmThreads"
          ? /^pid \d+ \((a\.test\.js, b-miss|b-miss\.test\.js, a)\.test\.js\):$/m
          : /1 problem\(s\)\s+b-miss\.test\.js\n/,
      );
      expect(missed.code).toBe(1);

      const fine = await vitest(pool, "b-fine.test.js");
      expect(fine.stdout).toMatch(/^ok: every registration landed/m);
      expect(fine.code).toBe(0);
      // Two whole test runs: more than the default timeout on a busy two-core machine.
    },
    120_000,
  );
});

describe("the Vitest reporter in watch mode", () => {
  it("a run with a miss is a failed run (FAIL, not PASS, while Vitest watches)", async () => {
    const dir = makeTree(vitestProject());
    const child = spawn(nodeBinary, [vitestBin, "--watch"], {
      cwd: dir,
      env: { ...process.env, ...quiet, CI: "", POOL: "threads", B: "b-miss.test.js" },
    });
    let out = "";
    const verdict = await new Promise<string>((resolve) => {
      const done = setTimeout(() => resolve("(no verdict in 90 s)"), 90_000);
      child.stdout.on("data", (chunk: Buffer) => {
        out += String(chunk);
        const line = /(PASS|FAIL)\s+(Waiting|Tests failed)/.exec(out);
        if (line !== null) {
          clearTimeout(done);
          resolve(line[1] as string);
        }
      });
    });
    child.kill();
    expect(out).toContain("[missing] Conv on gpu was expected");
    expect(verdict).toBe("FAIL");
  }, 120_000);
});

describe("DISPATCH_HOOK_AUDIT under a test runner, without its reporter (workers end without exit handlers)", () => {
  it("Vitest with dispatch-hook/vite: strict fails the test file that misses, naming it, and report prints its table", async () => {
    const dir = makeTree({
      ...vitestProject(),
      "vitest.config.mjs":
        'import { dispatchHook } from "dispatch-hook/vite";\nexport default { plugins: [dispatchHook()], test: { include: ["a.test.js", process.env.B] } };\n',
    });
    const vitest = (mode: string, b: string) => run(dir, [vitestBin, "run"], { DISPATCH_HOOK_AUDIT: mode, B: b, ...quiet });
    const strict = await vitest("strict", "b-miss.test.js");
    expect(strict.stdout).toMatch(/Test Files\s+1 failed \| 1 passed/);
    expect(`${strict.stdout}${strict.stderr}`).toContain("[missing] Conv on gpu was expected");
    expect(`${strict.stdout}${strict.stderr}`).toMatch(/ERR_DISPATCH_INCOMPLETE.*b-miss\.test\.js/);
    expect(strict.code).toBe(1);
    const fine = await vitest("strict", "b-fine.test.js");
    expect(fine.code).toBe(0);
    const report = await vitest("report", "b-miss.test.js");
    expect(report.stderr).toContain("[missing] Conv on gpu was expected");
    expect(report.code).toBe(0);
  }, 120_000);

  it("Vitest's vmThreads, one realm for every file: a file is failed for its own problem, never for an earlier file's", async () => {
    const project = vitestProject();
    const dir = makeTree({
      ...project,
      // Vitest runs the larger file first, on a first run: the one that misses, then the fine one, in the same realm.
      "b-miss.test.js": `${project["b-miss.test.js"]}\n// ${"-".repeat(2000)}\n`,
      "vitest.config.mjs":
        'import { dispatchHook } from "dispatch-hook/vite";\nexport default { plugins: [dispatchHook()], test: { pool: "vmThreads", maxWorkers: 1, include: ["b-miss.test.js", "b-fine.test.js"] } };\n',
    });
    const env = { DISPATCH_HOOK_AUDIT: "strict", ...quiet };
    const result = await run(dir, [vitestBin, "run", "--sequence.shuffle=false"], env);
    expect(result.stdout).toMatch(/Test Files\s+1 failed \| 1 passed/);
    expect(result.stdout.indexOf("b-miss.test.js")).toBeLessThan(result.stdout.indexOf("b-fine.test.js"));
    expect(result.stdout).toMatch(/❯ b-miss\.test\.js/);
    expect(result.stdout).toMatch(/✓ b-fine\.test\.js/);
    expect(result.code).toBe(1);
  }, 120_000);

  it("Jest with dispatch-hook in setupFilesAfterEnv: strict fails the test file that misses", async () => {
    const dir = makeTree({
      ...jestProject(),
      "jest.config.json": JSON.stringify({
        testEnvironment: "node",
        resolver: "dispatch-hook/jest",
        setupFilesAfterEnv: ["dispatch-hook"],
      }),
    });
    const jest = (b: string) => run(dir, [jestBin, "a.test.js", b], { DISPATCH_HOOK_AUDIT: "strict", ...quiet });
    const strict = await jest("b-miss.test.js");
    expect(strict.stderr).toContain("[missing] Conv on gpu was expected");
    expect(strict.stderr).toMatch(/FAIL .*b-miss\.test\.js/);
    expect(strict.stderr).toMatch(/PASS .*a\.test\.js/);
    expect(strict.code).toBe(1);
    expect((await jest("b-fine.test.js")).code).toBe(0);
  }, 120_000);
});

describe("dispatch-hook audit -- <a Vitest run>", () => {
  it("folds the records of the run's workers too (the plugin's setup file writes them), and names the file that missed", async () => {
    const dir = makeTree({
      ...vitestProject(),
      "vitest.config.mjs":
        'import { dispatchHook } from "dispatch-hook/vite";\nexport default { plugins: [dispatchHook()], test: { include: ["a.test.js", "b-miss.test.js"] } };\n',
    });
    const result = await run(dir, [cli, "audit", "--", vitestBin, "run"], quiet);
    expect(result.stdout).toMatch(/Tests\s+2 passed/);
    expect(result.stdout).toMatch(/1 problem\(s\)\s+b-miss\.test\.js\n/);
    expect(result.stdout).toMatch(/ok, 1 landed\s+a\.test\.js\n/);
    expect(result.stdout).toMatch(/^not ok: 1 problem\(s\) in 1 process\(es\)$/m);
    expect(result.code).toBe(1);
  }, 120_000);
});

describe("the Jest reporter folds every worker's record, and fails the run on a miss", () => {
  const dir = makeTree(jestProject());
  const jest = (b: string, ...flags: string[]) => run(dir, [jestBin, ...flags, "a.test.js", b], quiet);

  it.each([["--maxWorkers=2"], ["--runInBand"]])(
    "%s",
    async (flag) => {
      const missed = await jest("b-miss.test.js", flag);
      expect(missed.stderr).toMatch(/Tests:\s+2 passed/);
      expect(missed.stderr).toContain("[missing] Conv on gpu was expected");
      expect(missed.stderr).toMatch(/1 problem\(s\)\s+b-miss\.test\.js/);
      expect(missed.code).toBe(1);

      const fine = await jest("b-fine.test.js", flag);
      // Jest runs each test file in a module registry of its own, which writes its record: two files
      // in one process are one process with two records, never two processes.
      expect(fine.stderr).toMatch(
        flag === "--runInBand"
          ? /^ok: every registration landed, in 1 process\(es\), 2 audit records \(one per test file or realm\)$/m
          : /^ok: every registration landed, in (2 (of \d+ )?process\(es\)|1 process\(es\), 2 audit records .*)$/m,
      );
      expect(fine.code).toBe(0);
    },
    120_000,
  );
});

describe("the Jest reporter, with dispatch-hook first loaded inside a test", () => {
  it("the test passes, and the file's record says what landed", async () => {
    const dir = makeTree({
      ...jestProject(),
      "inside.test.js": [
        // Jest's fake timers replace setImmediate and queueMicrotask in the test's globals.
        "jest.useFakeTimers();",
        'test("loads cpu inside the test", () => {',
        '  const { cpuTable } = require("tensorkit/backends/cpu/table.js");',
        '  const { Conv } = require("kit-ops/ops.js");',
        '  expect(cpuTable.resolve(new Conv())()).toBe("conv");',
        "});",
      ].join("\n"),
    });
    const result = await run(dir, [jestBin, "--runInBand", "inside.test.js"], quiet);
    expect(result.stderr).toMatch(/Tests:\s+1 passed/);
    expect(result.stderr).toContain("DISPATCH_HOOK_AUDIT_RECORD_EARLY");
    expect(result.stderr).toMatch(/^ok: every registration landed, in 1 (of \d+ )?process\(es\)$/m);
    expect(result.code).toBe(0);
  }, 120_000);
});

describe("the Jest reporter, with dispatch-hook in setupFilesAfterEnv (the documented way to load it before the tests)", () => {
  it("a backend first loaded in a beforeAll: the file passes, and its record says what landed", async () => {
    const dir = makeTree({
      ...jestProject(),
      "jest.config.json": JSON.stringify({
        testEnvironment: "node",
        resolver: "dispatch-hook/jest",
        setupFilesAfterEnv: ["dispatch-hook"],
        reporters: ["default", "dispatch-hook/jest/reporter"],
      }),
      "before.test.js": [
        "let cpuTable;",
        'beforeAll(() => { ({ cpuTable } = require("tensorkit/backends/cpu/table.js")); });',
        'test("loads cpu in a beforeAll", () => {',
        '  const { Conv } = require("kit-ops/ops.js");',
        '  expect(cpuTable.resolve(new Conv())()).toBe("conv");',
        "});",
      ].join("\n"),
    });
    const result = await run(dir, [jestBin, "--runInBand", "before.test.js"], quiet);
    expect(result.stderr).toMatch(/Tests:\s+1 passed/);
    expect(result.stderr).toMatch(/^ok: every registration landed, in 1 (of \d+ )?process\(es\)$/m);
    expect(result.code).toBe(0);
  }, 120_000);
});

describe("a run the reporters cannot vouch for fails, saying why", () => {
  it("Jest without the resolver: nothing was checked, so the run fails (it passed, while dispatch-hook audit failed it)", async () => {
    const dir = makeTree({
      ...jestProject(),
      "jest.config.json": JSON.stringify({ testEnvironment: "node", reporters: ["default", "dispatch-hook/jest/reporter"] }),
    });
    const result = await run(dir, [jestBin, "a.test.js"], quiet);
    expect(result.stderr).toMatch(/Tests:\s+1 passed/);
    expect(result.stderr).toMatch(/^nothing was checked: no process made a registration or declared a backend that loaded$/m);
    expect(result.code).toBe(1);
  }, 120_000);

  it("Jest, a test file that does not parse: its process's missing record says no test file ran in it, not that it was killed", async () => {
    // ES modules (Jest's vm modules): dispatch-hook, in setupFilesAfterEnv, loads before the test file fails to parse.
    const dir = makeTree({
      ...project("module"),
      "node_modules/jest": { symlink: join(repoRoot, "node_modules/jest") },
      "jest.config.json": JSON.stringify({
        testEnvironment: "node",
        transform: {},
        resolver: "dispatch-hook/jest",
        setupFilesAfterEnv: ["dispatch-hook"],
        reporters: ["default", "dispatch-hook/jest/reporter"],
      }),
      "bad.test.js": 'test("x", () => { expect(1).toBe(1) \n',
    });
    const result = await run(dir, [jestBin, "--runInBand", "bad.test.js"], { ...quiet, NODE_OPTIONS: "--experimental-vm-modules" });
    expect(result.stderr).toMatch(/Test Suites:\s+1 failed/);
    expect(result.stderr).toMatch(/\[no record\] pid \d+ \(.*\) started, and wrote no audit record: it is Jest's own process/);
    expect(result.stderr).not.toContain("it was killed, or ended before its exit handlers ran");
    expect(result.code).toBe(1);
  }, 120_000);

  it("Vitest without dispatch-hook/vite's plugin: each worker's missing record says the plugin is missing, not that it was killed", async () => {
    const dir = makeTree({
      ...vitestProject(),
      "vitest.config.mjs":
        'export default { test: { include: ["a.test.js"], reporters: ["default", "dispatch-hook/vitest/reporter"] } };\n',
    });
    const result = await run(dir, [vitestBin, "run"], quiet);
    expect(result.stdout).toMatch(/Tests\s+1 passed/);
    expect(result.stdout).toMatch(
      /\[no record\] pid \d+ \(.*\) started, and wrote no audit record: this Vitest run has no dispatch-hook\/vite plugin/,
    );
    expect(result.stdout).toContain("plugins: [dispatchHook()]");
    expect(result.stdout).not.toContain("it was killed, or ended before its exit handlers ran");
    expect(result.stdout).toMatch(/^not ok: 1 process\(es\) without a record$/m);
    expect(result.code).toBe(1);
  }, 120_000);
});

describe("dispatch-hook audit -- <a run with the reporter>: the two compose", () => {
  it("Vitest: the reporter leaves the processes still running to the command's fold, and a passing run passes", async () => {
    const dir = makeTree(vitestProject());
    const env = { POOL: "forks", B: "b-fine.test.js", ...quiet };
    const result = await run(dir, [cli, "audit", "--", vitestBin, "run"], env);
    expect(result.stdout).toMatch(/Tests\s+2 passed/);
    expect(result.stdout).not.toContain("[no record]");
    expect(result.stdout).toMatch(/^\s+\[running\] pid \d+ \(.*vitest\.mjs run\) has not ended/m);
    expect(result.stdout.match(/^ok: every registration landed, in 2 (of \d+ )?process\(es\)/gm)).toHaveLength(2);
    expect(result.code).toBe(0);

    const missed = await run(dir, [cli, "audit", "--", vitestBin, "run"], {
      ...env,
      B: "b-miss.test.js",
    });
    expect(missed.stdout.match(/^not ok: 1 problem\(s\) in 1 process\(es\)$/gm)).toHaveLength(2);
    expect(missed.code).toBe(1);
  }, 120_000);

  it.each(["vmThreads", "vmForks"])(
    "Vitest, pool %s: a worker whose test files ran in vm contexts is not a process without a record",
    async (pool) => {
      const dir = makeTree(vitestProject());
      const env = { POOL: pool, B: "b-fine.test.js", ...quiet };
      const result = await run(dir, [cli, "audit", "--", vitestBin, "run"], env);
      expect(result.stdout).toMatch(/Tests\s+2 passed/);
      expect(result.stdout).not.toContain("[no record]");
      expect(result.code).toBe(0);
    },
    120_000,
  );

  it("Jest: the same", async () => {
    const dir = makeTree(jestProject());
    const result = await run(dir, [cli, "audit", "--", jestBin, "--runInBand", "a.test.js", "b-fine.test.js"], quiet);
    expect(result.stderr).toMatch(/Tests:\s+2 passed/);
    expect(result.stderr).not.toContain("[no record]");
    // The reporter's fold: the test files' realms wrote their records, and Jest's own realm, still
    // running, is the same thread: left to the command's fold, not listed apart as running.
    expect(result.stderr).toContain("1 process(es), 2 audit records (one per test file or realm) wrote to the run:");
    expect(result.stderr).not.toContain("[running]");
    // One process: Jest's own realm (the reporter's, nothing checked) and one realm per test file.
    expect(result.stdout).toContain("1 process(es), 3 audit records (one per test file or realm) wrote to the run:");
    expect(result.stdout).toMatch(/^ok: every registration landed, in 1 process\(es\), 2 audit records \(one per test file or realm\)$/m);
    expect(result.code).toBe(0);
  }, 120_000);
});
