import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { install, loaderVariable } from "../../src/hooks/install.js";
import * as entry from "../../src/hooks/loader-entry.js";
import { loaderFindings } from "../../src/hooks/loader-findings.js";
import { Matcher } from "../../src/hooks/matcher.js";
import { hub } from "../../src/hub.js";
import { thrown } from "../helpers.js";
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
const instrumented = installation.instrumented().map((u) => u.slice(u.lastIndexOf("/") + 1));
const before = registry.verify();
installation.dispose();
// After dispose, a new module instance is not instrumented any more.
const again = await import("./backends/numba.js?after-dispose");
let second;
try { again.numbaFuncify.resolve(new PoolLayer()); second = "landed"; } catch (e) { second = e.code; }
console.log(JSON.stringify({ mode: installation.mode, first, instrumented, second, problems: before.problems.length, checked: before.checked }));
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
      instrumented: ["numba.js"],
      second: "ERR_DISPATCH_NO_IMPL",
      problems: 0,
      // The registration, and the connected registry's expectation from the in-code plugin.
      checked: 2,
    });
  });

  it("with module.register, answers installation.config at once, from the config the hooks thread reads after register() returns", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({
        name: "harness",
        type: "module",
        dispatchHook: { backends: { numba: { module: "./backends/numba.js", export: "numbaFuncify" } } },
      }),
      "harness.mjs": [
        `import { install } from ${JSON.stringify(hooksEntry)};`,
        'const installation = install({ mode: "register" });',
        "const { rules, files } = installation.config;",
        "console.log(JSON.stringify({ rules: rules.map((r) => r.backend), files: files.length }));",
      ].join("\n"),
    });
    // Node 26 deprecates module.register (DEP0205): that warning is not ours.
    const result = await run(dir, ["--no-deprecation", "harness.mjs"]);
    // Had the wait run out (the hooks thread needing this thread to read it), a DISPATCH_HOOK_CONFIG_LATE warning would say so.
    expect(result.stderr).toBe("");
    expect(lastJson(result.stdout)).toEqual({ rules: ["numba"], files: 1 });
  });

  it("refuses bad options with a code and the nearest known word, and installs nothing", () => {
    const unknown = thrown(() => install({ registy: 1 } as never));
    expect(unknown.code).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(unknown.message).toContain('unknown option "registy" (did you mean "registry"?)');
    const mode = thrown(() => install({ mode: "registerhooks" } as never));
    expect(mode.message).toContain(
      '"mode" must be one of "registerHooks", "register", got "registerhooks" (did you mean "registerHooks"?)',
    );
    expect(thrown(() => install({ root: 5 } as never)).message).toContain('"root" must be a string, got number 5');
    expect(thrown(() => install({ plugins: [{ nmae: "x" }] } as never)).message).toContain(
      'plugins[0]: unknown option "nmae" (did you mean "name"?)',
    );
  });

  it.skipIf(hookMode() !== "register")("refuses registerHooks on a Node that lacks it, with a code", () => {
    expect(thrown(() => install({ mode: "registerHooks", discover: false, warnings: false })).code).toBe("ERR_DISPATCH_HOOK_UNAVAILABLE");
  });
});

const rule = { declaredIn: "p", packageName: "never-installed-fw", roots: [], subpath: "cpu.js", backend: "cpu", exportName: "cpuTable" };

describe("loaderFindings", () => {
  it("names a watched module that loaded but never signalled, and forgets it once it has", () => {
    const href = "file:///app/node_modules/never-installed-fw/cpu.js";
    const record = {
      mode: "registerHooks" as const,
      loaded: new Map([[href, "cpu"]]),
      failures: new Map(),
      matcher: new Matcher([rule]),
      unresolved: new Map<string, string>(),
      served: new Map(),
      registrationsResolved: new Set<string>(),
      plugins: [],
    };
    expect(loaderFindings(record)).toMatchObject([{ backend: "cpu", module: href, problem: "unsignalled" }]);
    expect(loaderFindings(record)[0]?.message).toContain("was loaded but never finished evaluating");
    // Where a plugin's registration module for the backend imports what does not resolve, that is the cause given.
    const cause = 'kit\'s registration module for cpu (file:///r.js) imports "./gone.js", which does not resolve (not found)';
    const told = loaderFindings({ ...record, unresolved: new Map([["cpu", cause]]) });
    expect(told[0]?.message).toBe(`${href} never finished evaluating, so its cpu table never signalled: ${cause}.`);
    hub().announce({
      via: "hook",
      namespace: "dispatch",
      backend: "cpu",
      module: href,
      exports: { cpuTable: new Map() },
      exportName: "cpuTable",
    });
    expect(loaderFindings(record)).toEqual([]);
  });

  it("passes on failures as they were reported", () => {
    const failure = { backend: "cpu", module: "file:///x.js", problem: "instrument-failed" as const, message: "x" };
    const record = {
      mode: "register" as const,
      loaded: new Map(),
      failures: new Map([["file:///x.js", failure]]),
      matcher: new Matcher([]),
      unresolved: new Map<string, string>(),
      served: new Map(),
      registrationsResolved: new Set<string>(),
      plugins: [],
    };
    expect(loaderFindings(record)).toEqual([failure]);
  });
});

describe("the loader's entry", () => {
  it("is install() and nothing else: the main entry arms the exit audit, only when the environment asks", () => {
    expect(Object.keys(entry)).toEqual(["install"]);
    expect(entry.install).toBe(install);
    const loader = readFileSync(new URL("../../loader.mjs", import.meta.url), "utf8");
    expect(loader).toContain('import { install } from "./dist/bundle/install.js";');
    expect(loader).toContain("install({ registry });");
    // And leaves the directory of the first process of the tree that ran it, for the processes it starts.
    expect(loader).toContain(`process.env.${loaderVariable} ||= process.cwd();`);
    expect(loader).not.toContain("auditAtExit");
    const main = readFileSync(new URL("../../src/default-registry.ts", import.meta.url), "utf8");
    expect(main).toMatch(/\nauditFromEnvironment\(\);\n/);
    const arming = readFileSync(new URL("../../src/registry/exit-audit.ts", import.meta.url), "utf8");
    expect(arming).toMatch(/if \(mode \|\| found !== undefined\) auditAtExit\(/);
  });
});
