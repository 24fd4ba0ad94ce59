/**
 * dispatch-hook/vitest in a real Vitest 4 run: the `registry` fixture (the default registry, which
 * plugins register into, put back after each test), toHaveLanded() and the setup that fails a test
 * leaving a registration pending. With `isolate: false` and one worker, test files share modules and
 * dispatch tables; what a test registers through the fixture must not leak into the next test or
 * file, while a plugin's registrations stay, and files that use the default registry directly share it.
 */
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appJson, makeTree, nodeVersion, repoRoot, run, type Tree } from "./fixture.js";

const vitestBin = join(repoRoot, "node_modules/vitest/vitest.mjs");

const tree: Tree = {
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  "node_modules/vitest": { symlink: join(repoRoot, "node_modules/vitest") },
  "node_modules/vite": { symlink: join(repoRoot, "node_modules/vite") },
  "node_modules/tensorkit/package.json": JSON.stringify({
    name: "tensorkit",
    type: "module",
    exports: { "./*": "./*" },
    dependencies: { "dispatch-hook": "*" },
    dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
  }),
  "node_modules/tensorkit/backends/cpu/table.js":
    'import { Dispatcher } from "dispatch-hook";\nexport const cpuTable = new Dispatcher({ name: "cpuTable", backend: "cpu" });\n',
  "node_modules/tensorkit/ops.js":
    "export class OpA {}\nexport class OpB {}\nexport class Shared1 {}\nexport class Shared2 {}\nexport class Conv {}\n",
  // A plugin that registers Conv for cpu from its registration module.
  "node_modules/kit-ops/package.json": JSON.stringify({
    name: "kit-ops",
    type: "module",
    dependencies: { tensorkit: "*", "dispatch-hook": "*" },
    dispatchHook: { registrations: { cpu: "./reg/cpu.js" } },
  }),
  "node_modules/kit-ops/reg/cpu.js":
    'import { register } from "dispatch-hook";\nimport { Conv } from "tensorkit/ops.js";\nregister("cpu", Conv, () => "conv from kit-ops");\n',
  "package.json": appJson({ type: "module", dependencies: { tensorkit: "*", "kit-ops": "*", "dispatch-hook": "*" } }),
  "vitest.config.mjs": [
    'import { dispatchHook } from "dispatch-hook/vite";',
    "export default {",
    "  plugins: [dispatchHook()],",
    '  test: { pool: "threads", isolate: false, maxWorkers: 1, setupFiles: ["dispatch-hook/vitest/setup"], server: { deps: { inline: ["tensorkit"] } } },',
    "};",
  ].join("\n"),
};

/** A file that registers its op through the fixture; its second test checks that no other file's op is in the table. */
function fixtureFile(mine: string, other: string): string {
  return [
    'import { expect } from "vitest";',
    'import { test } from "dispatch-hook/vitest";',
    'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
    `import { ${mine}, ${other} } from "tensorkit/ops.js";`,
    `test("registers ${mine} in its own registry", ({ registry }) => {`,
    `  registry.register("cpu", ${mine}, () => "${mine}");`,
    `  expect(registry).toHaveLanded(["${mine}"], { backend: "cpu" });`,
    `  expect(cpuTable.resolve(new ${mine}())()).toBe("${mine}");`,
    "});",
    `test("sees nothing of the other file, nor of its own previous test", ({ registry }) => {`,
    `  expect(() => cpuTable.resolve(new ${other}())).toThrow(/ERR_DISPATCH_NO_IMPL|No implementation/);`,
    `  expect(() => cpuTable.resolve(new ${mine}())).toThrow(/ERR_DISPATCH_NO_IMPL|No implementation/);`,
    `  expect(registry.verify().registrations.filter((r) => r.state === "applied" && ["${mine}", "${other}"].includes(r.op))).toEqual([]);`,
    "  globalThis.fixtureFilesRun = (globalThis.fixtureFilesRun ?? 0) + 1;",
    '  console.log("fixture files run: " + globalThis.fixtureFilesRun);',
    "});",
  ].join("\n");
}

/** A file that asks for the shared default registry: the file that runs second sees the first one's op. */
function sharedFile(mine: string, other: string): string {
  return [
    'import { expect, test } from "vitest";',
    'import { register, registry } from "dispatch-hook";',
    'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
    `import { ${mine}, ${other} } from "tensorkit/ops.js";`,
    `test("the default registry is shared by the files that use it", () => {`,
    `  register("cpu", ${mine}, () => "${mine}");`,
    "  globalThis.sharedFilesRun = (globalThis.sharedFilesRun ?? 0) + 1;",
    '  console.log("shared files run: " + globalThis.sharedFilesRun);',
    "  const ops = registry.verify().registrations.map((r) => r.op);",
    `  expect(ops).toContain("${mine}");`,
    `  if (globalThis.sharedFilesRun === 2) expect(cpuTable.resolve(new ${other}())()).toBe("${other}");`,
    "});",
  ].join("\n");
}

async function vitest(dir: string, files: readonly string[]) {
  const result = await run(dir, [vitestBin, "run", ...files], { CI: "1", NO_COLOR: "1" });
  return { ...result, output: result.stdout + result.stderr };
}

describe("dispatch-hook/vitest", () => {
  it("with isolate: false, fixture registrations stay in their file and the default registry is shared", async () => {
    const dir = makeTree({
      ...tree,
      "test/a.test.mjs": fixtureFile("OpA", "OpB"),
      "test/b.test.mjs": fixtureFile("OpB", "OpA"),
      "test/shared1.test.mjs": sharedFile("Shared1", "Shared2"),
      "test/shared2.test.mjs": sharedFile("Shared2", "Shared1"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toMatch(/Tests\s+6 passed/);
    expect(result.code).toBe(0);
    // The files did share one worker: the second shared file saw the first (and checked its op).
    expect(result.output).toContain("shared files run: 2");
    expect(result.output).toContain("fixture files run: 2");
  });

  // On Node 24+ Vite's module runner runs a registration module in no window (notes/node-versions.md):
  // its registrations count as the app's, and the fixture's restore undoes them after the first test.
  it.skipIf(Number(nodeVersion.split(".")[0]) >= 24)(
    "the fixture is the registry the plugin registers into: toHaveLanded() passes beside a plugin that landed, in test after test (not on Node 24+: Vite's module runner loses the window)",
    async () => {
      const dir = makeTree({
        ...tree,
        "test/plugin.test.mjs": [
          'import { expect } from "vitest";',
          'import { test } from "dispatch-hook/vitest";',
          'import { Conv } from "tensorkit/ops.js";',
          'test("the plugin\'s Conv landed on cpu", async ({ registry }) => {',
          '  const { cpuTable } = await import("tensorkit/backends/cpu/table.js");',
          '  expect(registry).toHaveLanded(["Conv"], { backend: "cpu" });',
          '  expect(cpuTable.resolve(new Conv())()).toBe("conv from kit-ops");',
          "});",
          'test("and it is still there in the next test", async ({ registry }) => {',
          '  const { cpuTable } = await import("tensorkit/backends/cpu/table.js");',
          '  expect(registry).toHaveLanded(["Conv"], { backend: "cpu" });',
          '  expect(cpuTable.resolve(new Conv())()).toBe("conv from kit-ops");',
          "});",
        ].join("\n"),
      });
      const result = await vitest(dir, []);
      expect(result.output).toMatch(/Tests\s+2 passed/);
      expect(result.code).toBe(0);
    },
  );

  it("the README's complete Vitest test passes, as written, beside the quick start's packages", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const quick = readme.slice(readme.indexOf("## Quick start"));
    const files = Object.fromEntries(
      [...quick.matchAll(/<!-- file: (\S+) -->\n```\w+\n([\s\S]*?)```/g)]
        .filter((m) => (m[1] as string).includes("/"))
        .map((m) => [`node_modules/${m[1]}`, m[2] as string]),
    );
    const guide = readme.slice(readme.indexOf("A complete Vitest test"));
    const example = /```js\n([\s\S]*?)```/.exec(guide)?.[1] as string;
    expect(example).toContain('from "dispatch-hook/vitest"');
    const dir = makeTree({
      ...tree,
      ...files,
      "vitest.config.mjs": [
        'import { dispatchHook } from "dispatch-hook/vite";',
        // Only the plugin, as the README's table gives it: the example must not need the setup file.
        "export default { plugins: [dispatchHook()] };",
      ].join("\n"),
      "package.json": appJson({ type: "module", dependencies: { tensorkit: "*", "kit-ops": "*", "dispatch-hook": "*" } }),
      "test/readme.test.mjs": example,
    });
    const result = await vitest(dir, []);
    expect(result.output).toMatch(/Tests\s+1 passed/);
    expect(result.code).toBe(0);
  });

  it("toHaveLanded()'s failure says what became of each op type, and never ends in an ok verdict", async () => {
    const dir = makeTree({
      ...tree,
      "test/landed.test.mjs": [
        'import { expect } from "vitest";',
        'import { test } from "dispatch-hook/vitest";',
        'import { Conv, OpA, OpB } from "tensorkit/ops.js";',
        "const failure = (ops, backend) => {",
        "  try { expect(registry).toHaveLanded(ops, { backend }); } catch (e) { return e.message; }",
        "  throw new Error('it passed');",
        "};",
        "let registry;",
        'test("why not", async ({ registry: fixture }) => {',
        "  registry = fixture;",
        '  await import("tensorkit/backends/cpu/table.js");',
        '  registry.register("cpu", OpA, () => "a");',
        '  const waits = registry.register("gpu", OpB, () => "b");',
        '  const messages = { never: failure(["OpB"], "cpu"), pending: failure(["OpB"], "gpu"), nowhere: failure(["Conv", "Pool"], "cpu") };',
        "  waits.dispose();",
        '  console.log("MESSAGES " + JSON.stringify(messages));',
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toMatch(/Tests\s+1 passed/);
    const line = result.output.split("\n").find((l) => l.startsWith("MESSAGES ")) as string;
    const messages = JSON.parse(line.slice("MESSAGES ".length)) as Record<string, string>;
    expect(messages.never).toContain("OpB was never registered on cpu (it was registered on gpu, pending)");
    expect(messages.pending).toContain("OpB on gpu (registered at");
    expect(messages.pending).toContain("is still pending");
    // The plugin's Conv landed on cpu under Node 20 and 22 (not on 24+, where the window is lost); Pool was never registered anywhere.
    expect(messages.nowhere).toContain("Pool was never registered on cpu");
    for (const message of Object.values(messages)) {
      expect(message.trim().split("\n").at(-1)).not.toMatch(/^ok/);
      expect(message).not.toContain("ok: every registration landed");
    }
  });

  it("with the plugin and no dispatch module loaded yet, toHaveLanded() says the backend did not load, not that a loader is missing", async () => {
    const dir = makeTree({
      ...tree,
      "test/early.test.mjs": [
        'import { expect } from "vitest";',
        'import { test } from "dispatch-hook/vitest";',
        'import { Conv } from "tensorkit/ops.js";',
        'test("before any backend loads", ({ registry }) => {',
        "  let message = 'it passed';",
        '  try { expect(registry).toHaveLanded(["Conv"], { backend: "gpu" }); } catch (e) { message = e.message; }',
        '  console.log("MESSAGE " + JSON.stringify(message));',
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toMatch(/Tests\s+1 passed/);
    const line = result.output.split("\n").find((l) => l.startsWith("MESSAGE ")) as string;
    const message = JSON.parse(line.slice("MESSAGE ".length)) as string;
    expect(message).toContain("Conv did not land on gpu");
    expect(message).toContain("dispatch-hook/vite serves this thread");
    expect(message).not.toContain("no-loader");
    expect(message).not.toContain("no dispatch-hook loader is installed");
  });

  it("a miss in Vitest without the plugin says to add it", async () => {
    const dir = makeTree({
      ...tree,
      "vitest.config.mjs": 'export default { test: { server: { deps: { inline: ["tensorkit"] } } } };\n',
      "test/miss.test.mjs": [
        'import { expect, test } from "vitest";',
        'import { register } from "dispatch-hook";',
        'import { Conv } from "tensorkit/ops.js";',
        'test("misses", async () => {',
        '  register("cpu", Conv, () => "conv");',
        '  const { cpuTable } = await import("tensorkit/backends/cpu/table.js");',
        "  expect(() => cpuTable.resolve(new Conv())).toThrow(/Add plugins: \\[dispatchHook\\(\\)\\]/);",
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toMatch(/Tests\s+1 passed/);
    expect(result.code).toBe(0);
  });

  it("a test that leaves a registration pending where a table of its backend exists fails, with the audit", async () => {
    const dir = makeTree({
      ...tree,
      "test/pending.test.mjs": [
        'import { test } from "vitest";',
        'import { Dispatcher, register } from "dispatch-hook";',
        'import { Conv } from "tensorkit/ops.js";',
        "let table;",
        'test("leaves Conv pending on gpu, whose table never reached dispatch-hook", () => {',
        '  register("gpu", Conv, () => "conv");',
        '  table = new Dispatcher({ name: "gpu table", backend: "gpu" });',
        "  table.has(Conv);",
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.code).toBe(1);
    expect(result.output).toContain("This test left 1 registration pending: Conv on gpu");
    expect(result.output).toMatch(/Conv\s.*pending/);
  });

  // Written from a new user's trial: tests that ran at once shared one "before", so the test that ended
  // last was blamed (A passed, B failed for A's registration), or both failed.
  it("tests that ran at once (describe.concurrent): no test is blamed for another's pending registration; the file fails, naming them", async () => {
    const dir = makeTree({
      ...tree,
      "test/concurrent.test.mjs": [
        'import { describe, test } from "vitest";',
        'import { Dispatcher, register } from "dispatch-hook";',
        'import { Conv } from "tensorkit/ops.js";',
        "const sleep = (ms) => new Promise((done) => setTimeout(done, ms));",
        "let table; // held, as a framework holds its tables: a collected table is no table the audit sees",
        'describe.concurrent("at once", () => {',
        '  test("A leaves Conv pending on gpu", async () => {',
        '    register("gpu", Conv, () => "conv");',
        '    table = new Dispatcher({ name: "gpu table", backend: "gpu" });',
        "    table.has(Conv);",
        "    await sleep(300);",
        "  });",
        '  test("B registers nothing, and ends first", async () => { await sleep(50); });',
        '  test("C registers nothing, and ends last", async () => { await sleep(400); });',
        "});",
        'test("D runs alone, after them, and registers nothing", () => {});',
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/Tests\s+4 passed/);
    expect(result.output).toContain(
      "One of the tests that ran at once (A leaves Conv pending on gpu, B registers nothing, and ends first, C registers nothing, and ends last) left 1 registration pending: Conv on gpu",
    );
    expect(result.output).not.toContain("This test left");
  });

  // Written from a new user's trial: a test.fails test counts any failure as the one it expects, so
  // the setup's error for its pending registration made it pass.
  it("a test.fails test that leaves a registration pending still fails its file, naming it", async () => {
    const dir = makeTree({
      ...tree,
      "test/expected-failure.test.mjs": [
        'import { test } from "vitest";',
        'import { Dispatcher, register } from "dispatch-hook";',
        'import { Conv } from "tensorkit/ops.js";',
        "let table;",
        'test.fails("a known bug, which also leaves Conv pending on gpu", () => {',
        '  register("gpu", Conv, () => "conv");',
        '  table = new Dispatcher({ name: "gpu table", backend: "gpu" });',
        "  table.has(Conv);",
        '  throw new Error("known bug");',
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toMatch(/Tests\s+1 expected fail/);
    expect(result.output).toContain(
      'The test "a known bug, which also leaves Conv pending on gpu" (test.fails: its own failure is expected, so the file fails for this) left 1 registration pending: Conv on gpu',
    );
    expect(result.code).toBe(1);
  });

  // Written from a review: Vitest skips the remaining afterEach hooks once one throws, so a test whose
  // setup afterEach never ran held its group open, and no later test of the file was judged.
  it("a test after one whose afterEach threw is still judged", async () => {
    const dir = makeTree({
      ...tree,
      "test/after-a-throw.test.mjs": [
        'import { afterEach, describe, expect, test } from "vitest";',
        'import { Dispatcher, register } from "dispatch-hook";',
        'import { Conv } from "tensorkit/ops.js";',
        'describe("inner", () => {',
        '  afterEach(({ task }) => { if (task.fails) expect("cleanup").toBe("clean"); });',
        '  test.fails("X is expected to fail", () => { throw new Error("known bug"); });',
        "});",
        "let table;",
        'test("Y leaves Conv pending on gpu", () => {',
        '  register("gpu", Conv, () => "conv");',
        '  table = new Dispatcher({ name: "gpu table", backend: "gpu" });',
        "  table.has(Conv);",
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toContain("This test left 1 registration pending: Conv on gpu");
    expect(result.code).toBe(1);
  });

  it("a plugin whose declaration cannot be read makes the audit not ok, with a loader problem, as under the loader", async () => {
    const dir = makeTree({
      ...tree,
      "node_modules/kit-ops/package.json": JSON.stringify({
        name: "kit-ops",
        type: "module",
        dependencies: { tensorkit: "*", "dispatch-hook": "*" },
        dispatchHook: { registation: { cpu: "./reg/cpu.js" } },
      }),
      "test/typo.test.mjs": [
        'import { expect } from "vitest";',
        'import { test } from "dispatch-hook/vitest";',
        'test("the cpu table loads", async ({ registry }) => {',
        '  await import("tensorkit/backends/cpu/table.js");',
        "  const report = registry.verify();",
        '  console.log("problems: " + report.problems.map((p) => p.kind + " " + p.message.slice(0, 40)).join("; "));',
        "  expect(report.ok).toBe(false);",
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toContain('problems: loader Invalid option in package.json "dispatch');
    expect(result.output).toMatch(/Tests\s+1 passed/);
  });

  it("a registration waiting for a backend that never loads fails no test: a plugin registers for every backend it supports", async () => {
    const dir = makeTree({
      ...tree,
      "test/waits.test.mjs": [
        'import { test } from "vitest";',
        'import { register } from "dispatch-hook";',
        'import { Conv } from "tensorkit/ops.js";',
        'test("registers Conv for gpu, which this test never loads", () => {',
        '  register("gpu", Conv, () => "conv");',
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toMatch(/Tests\s+1 passed/);
    expect(result.output).not.toContain("left 1 registration pending");
  });

  it("toHaveLanded() fails with the audit table", async () => {
    const dir = makeTree({
      ...tree,
      "test/landed.test.mjs": [
        'import { expect } from "vitest";',
        'import { test } from "dispatch-hook/vitest";',
        'import { Conv } from "tensorkit/ops.js";',
        'test("Conv did not land on gpu", ({ registry }) => {',
        '  const handle = registry.register("gpu", Conv, () => "conv");',
        "  try {",
        '    expect(registry).toHaveLanded(["Conv"], { backend: "gpu" });',
        "  } finally {",
        "    handle.dispose();",
        "  }",
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.code).toBe(1);
    expect(result.output).toContain("expected Conv to have landed on gpu");
    expect(result.output).toMatch(/Conv\s.*pending/);
  });

  it("toHaveLanded() fails for a registration whose entry was taken out of the table since (displaced); it passed", async () => {
    const dir = makeTree({
      ...tree,
      "test/displaced.test.mjs": [
        'import { expect } from "vitest";',
        'import { test } from "dispatch-hook/vitest";',
        'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
        'import { OpA } from "tensorkit/ops.js";',
        'test("the framework takes OpA out", ({ registry }) => {',
        '  registry.register("cpu", OpA, () => "a");',
        "  cpuTable.unregister(OpA);",
        '  expect(registry).toHaveLanded(["OpA"], { backend: "cpu" });',
        "});",
        'test("an empty list names nothing to check", ({ registry }) => {',
        "  expect(() => expect(registry).toHaveLanded([])).toThrow(/ERR_DISPATCH_INVALID_OPTION|non-empty array/);",
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toContain("expected OpA to have landed on cpu");
    expect(result.output).toMatch(/Tests\s+1 failed \| 1 passed/);
    expect(result.code).toBe(1);
  });

  it("the fixture undoes what a test registered through another copy of dispatch-hook (its CommonJS entry, a nested copy); it leaked into the next test", async () => {
    const nested = "node_modules/stub-kit/node_modules/dispatch-hook";
    const dir = makeTree({
      ...tree,
      "node_modules/cjs-helper/index.cjs":
        'const { register } = require("dispatch-hook");\nexports.stub = (backend, type, impl) => register(backend, type, impl);\n',
      "node_modules/stub-kit/package.json": JSON.stringify({ name: "stub-kit", type: "module", exports: { ".": "./index.js" } }),
      "node_modules/stub-kit/index.js":
        'import { register } from "dispatch-hook";\nexport const stub = (backend, type, impl) => register(backend, type, impl);\n',
      [`${nested}/package.json`]: readFileSync(join(repoRoot, "package.json"), "utf8").replace(/"version": "[^"]+"/, '"version": "0.0.9"'),
      "test/copies.test.mjs": [
        'import { createRequire } from "node:module";',
        'import { expect } from "vitest";',
        'import { test } from "dispatch-hook/vitest";',
        'import { stub as nestedStub } from "stub-kit";',
        'import { cpuTable } from "tensorkit/backends/cpu/table.js";',
        'import { OpA, OpB } from "tensorkit/ops.js";',
        'const { stub: cjsStub } = createRequire(import.meta.url)("cjs-helper/index.cjs");',
        'test("stubs OpA through the CommonJS entry and OpB through a nested copy", ({ registry }) => {',
        '  cjsStub("cpu", OpA, () => "stub a");',
        '  nestedStub("cpu", OpB, () => "stub b");',
        '  expect([cpuTable.resolve(new OpA())(), cpuTable.resolve(new OpB())()]).toEqual(["stub a", "stub b"]);',
        "});",
        'test("sees neither stub", ({ registry }) => {',
        "  expect([cpuTable.has(OpA), cpuTable.has(OpB)]).toEqual([false, false]);",
        "});",
      ].join("\n"),
    });
    // Files of its own, not links: a second module instance of every file, as an install makes.
    cpSync(join(repoRoot, "dist"), join(dir, nested, "dist"), { recursive: true });
    const result = await vitest(dir, []);
    expect(result.output).toMatch(/Tests\s+2 passed/);
    expect(result.code).toBe(0);
  });

  it("a retried test whose first attempt left a registration pending still fails; its retry passed", async () => {
    const dir = makeTree({
      ...tree,
      "test/retried.test.mjs": [
        'import { test } from "vitest";',
        'import { register, registry } from "dispatch-hook";',
        'import { OpA } from "tensorkit/ops.js";',
        "let attempt = 0;",
        'test("leaves OpA pending on its first attempt", { retry: 1 }, () => {',
        "  if (++attempt > 1) return;",
        '  register("tpu", OpA, () => "a");',
        '  try { registry.assertComplete({ backends: ["tpu"] }); } catch {}',
        "});",
      ].join("\n"),
    });
    const result = await vitest(dir, []);
    expect(result.output).toContain("left 1 registration pending: OpA on tpu");
    expect(result.output).toMatch(/Tests\s+1 failed/);
    expect(result.code).toBe(1);
  });
});
