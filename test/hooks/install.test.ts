import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { install } from "../../src/hooks/install.js";
import { lastJson, makeTree, nodeVersion, repoRoot, run } from "../integration/fixture.js";

const hooksEntry = pathToFileURL(join(repoRoot, "dist/hooks/index.js")).href;
const apiEntry = pathToFileURL(join(repoRoot, "dist/index.js")).href;

/** A test harness that configures everything in code: no package.json declarations at all. */
const harness = `
import { install } from ${JSON.stringify(hooksEntry)};
import { createRegistry, Dispatcher } from ${JSON.stringify(apiEntry)};
class PoolLayer {}
const registry = createRegistry();
const installation = install({
  registry,
  discover: false,
  backends: { numba: { module: "./backends/numba.js", export: "numbaFuncify" } },
  plugins: [{ name: "local-ops", root: "./plugin", expects: { numba: ["PoolLayer"] } }],
});
registry.register("numba", PoolLayer, () => "pooled");
const { numbaFuncify } = await import("./backends/numba.js");
const first = numbaFuncify.resolve(new PoolLayer())();
const signalled = installation.signalled().map((n) => n.backend);
const instrumented = installation.instrumented().length;
installation.dispose();
installation.dispose();
// After dispose, a new module instance is not instrumented any more.
const again = await import("./backends/numba.js?after-dispose");
let second;
try { again.numbaFuncify.resolve(new PoolLayer()); second = "landed"; } catch (e) { second = e.code; }
console.log(JSON.stringify({ mode: installation.mode, first, signalled, instrumented, second, problems: registry.verify().problems.length }));
`;

describe("install()", () => {
  it("configures in code, applies registrations, and stops on dispose", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "harness", type: "module" }),
      "backends/numba.js": `import { Dispatcher } from ${JSON.stringify(apiEntry)};\nexport const numbaFuncify = new Dispatcher({ backend: "numba" });\n`,
      "harness.mjs": harness,
    });
    const result = await run(dir, ["harness.mjs"]);
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({
      mode: hookMode(nodeVersion),
      first: "pooled",
      signalled: ["numba"],
      instrumented: 1,
      second: "ERR_DISPATCH_NO_IMPL",
      problems: 0,
    });
  });

  it("refuses unknown options, and a hook API the running Node lacks", () => {
    expect(() => install({ registy: 1 } as never)).toThrow(/unknown option "registy"/);
    if (hookMode() === "register") {
      expect(() => install({ mode: "registerHooks", discover: false, warnings: false })).toThrow(/registerHooks is not available/);
    }
  });
});
