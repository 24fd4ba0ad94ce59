import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { Discovery } from "../../src/hooks/discovery.js";
import { runtimeLocation } from "../../src/hooks/hook-api.js";
import { createHooks, type HookReport, type LoadResult, type ResolveResult } from "../../src/hooks/node-hooks.js";
import { parseVirtual, virtualUrl } from "../../src/hooks/virtual-modules.js";
import { appJson, makeTree } from "../integration/fixture.js";

const framework = JSON.stringify({
  name: "tensorlab",
  dispatchHook: { backends: { "*": { module: "./link/{backend}.js", export: "{backend}Funcify" } } },
});

function setup(mode: "registerHooks" | "register" = "registerHooks", extra: Record<string, string> = {}) {
  const root = makeTree({
    "package.json": appJson({ dependencies: { tensorlab: "1", "ml-ops": "1" } }),
    "node_modules/tensorlab/package.json": framework,
    "node_modules/tensorlab/link/numba.js": "export const numbaFuncify = new Map();\nexport default 1;\n",
    "node_modules/tensorlab/link/jax.js": "export const jaxFuncify = new Map();\n",
    "node_modules/tensorlab/link/cjs.js": "exports.cjsFuncify = new Map();\n",
    "node_modules/tensorlab/index.js": "",
    "node_modules/ml-ops/package.json": JSON.stringify({
      name: "ml-ops",
      dispatchHook: { registrations: { numba: "./numba.js", jax: "./missing.js" } },
    }),
    "node_modules/ml-ops/numba.js": "",
    ...extra,
  });
  const reports: HookReport[] = [];
  /** How many times resolve() asked for load() before handing out a generated module's URL. */
  const loadWanted = { count: 0, idle: 0 };
  const hooks = createHooks({
    discovery: new Discovery({ root }),
    mode,
    runtime: runtimeLocation(),
    report: (r) => reports.push(r),
    needLoad: () => loadWanted.count++,
    idle: () => loadWanted.idle++,
  });
  const url = (path: string) => pathToFileURL(join(root, path)).href;
  const files: Record<string, LoadResult> = {
    [url("node_modules/tensorlab/link/numba.js")]: {
      format: "module",
      source: "export const numbaFuncify = new Map();\nexport default 1;\n",
    },
    [url("node_modules/tensorlab/link/jax.js")]: {
      format: "module",
      source: new TextEncoder().encode("export const jaxFuncify = new Map();\n"),
    },
    [url("node_modules/tensorlab/link/cjs.js")]: { format: "commonjs", source: null },
  };
  const nextLoad = (href: string) => files[href] ?? { format: "module", source: "export {};\n" };
  const resolved =
    (href: string, format: string | null = "module") =>
    () =>
      ({ url: href, format }) as ResolveResult;
  return { root, hooks, reports, url, nextLoad, resolved, loadWanted };
}

describe("the resolve hook", () => {
  it("asks for load() exactly when it hands out a generated module's URL, and never for a module it passes through", () => {
    const { hooks, url, resolved, loadWanted } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const cjs = url("node_modules/tensorlab/link/cjs.js");
    hooks.resolve("tensorlab", { parentURL: url("main.mjs") }, () => ({ url: url("node_modules/tensorlab/index.js"), format: "module" }));
    hooks.resolve("./x.json", { parentURL: url("main.mjs") }, () => ({ url: url("x.json"), format: "json" }));
    hooks.resolve(numba, { parentURL: virtualUrl(numba, "facade") }, resolved(numba));
    expect(loadWanted.count).toBe(0);
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("main.mjs") }, resolved(numba));
    expect(loadWanted.count).toBe(1);
    hooks.resolve(virtualUrl(numba, "step", 0), {}, () => ({ url: "never" }));
    expect(loadWanted.count).toBe(2);
    const viaRequire = hooks.resolve(
      "tensorlab/link/cjs.js",
      { parentURL: url("main.cjs"), conditions: ["require"] },
      resolved(cjs, "commonjs"),
    );
    expect((viaRequire as ResolveResult).url).toBe(virtualUrl(cjs, "cjs-facade"));
    expect(loadWanted.count).toBe(3);
  });

  it("lets load() step aside once every generated module handed out has loaded, and asks again only for one Node has not cached", () => {
    const { hooks, url, resolved, nextLoad, loadWanted } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const facade = virtualUrl(numba, "facade");
    const step = virtualUrl(numba, "step", 0);
    const done = virtualUrl(numba, "done", 0);
    const last = virtualUrl(numba, "step", 1);
    const other = () => hooks.resolve("./other.js", { parentURL: url("main.mjs") }, resolved(url("other.js")));
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("main.mjs") }, resolved(numba));
    hooks.load(facade, {}, nextLoad);
    other();
    // The facade's source names its step marker, which has not loaded yet.
    expect(loadWanted.idle).toBe(0);
    for (const marker of [step, done, last]) {
      hooks.resolve(marker, { parentURL: facade }, () => ({ url: "never" }));
      hooks.load(marker, {}, nextLoad);
    }
    // Never from inside Node's load chain: the next resolve() lets it go.
    expect(loadWanted.idle).toBe(0);
    other();
    expect(loadWanted.idle).toBe(1);
    other();
    expect(loadWanted.idle).toBe(1);
    const asked = loadWanted.count;
    // Imported again: Node's module map holds the facade, and load() is not called for it.
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("later.mjs") }, resolved(numba));
    expect(loadWanted.count).toBe(asked);
    // require() keys its cache by file name, and require.cache does not hold the facade here:
    // Node would call load() for it, so load() is wanted again, and kept until it has served it.
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("later.cjs"), conditions: ["require"] }, resolved(numba));
    expect(loadWanted.count).toBe(asked + 1);
    other();
    expect(loadWanted.idle).toBe(1);
    hooks.load(facade, {}, nextLoad);
    other();
    expect(loadWanted.idle).toBe(2);
  });

  it("never lets load() go from inside a load chain, even when something resolves there", () => {
    const { hooks, url, resolved, nextLoad, loadWanted } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const other = () => hooks.resolve("./other.js", { parentURL: url("main.mjs") }, resolved(url("other.js")));
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("main.mjs") }, resolved(numba));
    // While the facade loads, nothing else is awaited; the next hook resolves a module meanwhile.
    hooks.load(virtualUrl(numba, "facade"), {}, (href) => {
      other();
      return nextLoad(href);
    });
    expect(loadWanted.idle).toBe(0);
  });

  it("sends an importer of a watched module to its facade, and passes everything else through untouched", () => {
    const { hooks, url, resolved } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const other = { url: url("node_modules/tensorlab/index.js"), format: "module" };
    expect(hooks.resolve("tensorlab", { parentURL: url("main.mjs") }, () => other)).toBe(other);
    expect(hooks.resolve("tensorlab/link/numba.js", { parentURL: url("main.mjs") }, resolved(numba))).toEqual({
      url: virtualUrl(numba, "facade"),
      format: "module",
    });
  });

  it("lets the facade, its markers and the module itself reach the original", () => {
    const { hooks, url, resolved } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    for (const parent of [virtualUrl(numba, "facade"), virtualUrl(numba, "step", 0), numba]) {
      expect((hooks.resolve(numba, { parentURL: parent }, resolved(numba)) as ResolveResult).url).toBe(numba);
    }
    // Its own virtual modules short-circuit, and never reach the next hook.
    expect(hooks.resolve(virtualUrl(numba, "step", 0), {}, () => ({ url: "never" }))).toEqual({
      url: virtualUrl(numba, "step", 0),
      format: "module",
      shortCircuit: true,
    });
  });

  it("leaves JSON and imports with attributes alone, and sends require() of an ES module to the ES facade", () => {
    const { hooks, url, resolved } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    // require() of an ES module is require(esm): the facade is an ES module too.
    expect((hooks.resolve(numba, { conditions: ["require"] }, resolved(numba)) as ResolveResult).url).toBe(virtualUrl(numba, "facade"));
    expect((hooks.resolve(numba, {}, resolved(numba, "json")) as ResolveResult).url).toBe(numba);
    expect((hooks.resolve(numba, { importAttributes: { type: "json" } }, resolved(numba)) as ResolveResult).url).toBe(numba);
  });

  it("learns a framework's declarations from the first module of its package it resolves", () => {
    const root = makeTree({
      "package.json": appJson(),
      "node_modules/tensorlab/package.json": framework,
      "node_modules/tensorlab/link/numba.js": "",
    });
    const reports: HookReport[] = [];
    const hooks = createHooks({
      discovery: new Discovery({ root }),
      mode: "registerHooks",
      runtime: runtimeLocation(),
      report: (r) => reports.push(r),
    });
    const numba = pathToFileURL(join(root, "node_modules/tensorlab/link/numba.js")).href;
    // The very first module of the package is the dispatch module: learned before it is matched.
    // No plugin has a registration module for it: it keeps its URL, and load() appends the signal.
    expect((hooks.resolve(numba, {}, () => ({ url: numba, format: "module" })) as ResolveResult).url).toBe(numba);
    expect(reports.map((r) => r.type)).toEqual(["config"]);
    const loaded = hooks.load(numba, {}, () => ({ format: "module", source: "export const numbaFuncify = new Map();\n" })) as LoadResult;
    expect(String(loaded.source)).toMatch(
      /^export const numbaFuncify = new Map\(\);\n;import \* as __dispatchHook0 from "[^"]+numba\.js";/,
    );
    expect(String(loaded.source)).toContain("signalEvaluated as __dispatchHook0s");
    expect(reports.map((r) => r.type)).toEqual(["config", "facade"]);
  });

  it("works with asynchronous next hooks (module.register)", async () => {
    const { hooks, url } = setup("register");
    const numba = url("node_modules/tensorlab/link/numba.js");
    const result = await hooks.resolve(numba, {}, async () => ({ url: numba, format: "module" }));
    expect(result.url).toBe(virtualUrl(numba, "facade"));
  });
});

describe("the load hook", () => {
  it("builds an ES facade: the same exports (default only when the original has one), then the markers", () => {
    const { hooks, url, nextLoad, reports } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const facade = String((hooks.load(virtualUrl(numba, "facade"), {}, nextLoad) as LoadResult).source);
    expect(facade.split("\n").filter(Boolean)).toEqual([
      `export * from ${JSON.stringify(numba)};`,
      `export { default } from ${JSON.stringify(numba)};`,
      `import ${JSON.stringify(virtualUrl(numba, "step", 0))};`,
      `import ${JSON.stringify(url("node_modules/ml-ops/numba.js"))};`,
      `import ${JSON.stringify(virtualUrl(numba, "done", 0))};`,
      `import ${JSON.stringify(virtualUrl(numba, "step", 1))};`,
    ]);
    const jax = url("node_modules/tensorlab/link/jax.js");
    const jaxFacade = String((hooks.load(virtualUrl(jax, "facade"), {}, nextLoad) as LoadResult).source);
    expect(jaxFacade).not.toContain("default");
    // A registration module that does not exist is recorded by its step, not imported.
    expect(jaxFacade).toContain(JSON.stringify(virtualUrl(jax, "step", 0)));
    expect(jaxFacade).not.toContain("missing.js");
    expect(reports.filter((r) => r.type === "facade").map((r) => (r as { url: string }).url)).toEqual([numba, jax]);
  });

  it("loads a CommonJS original with require() first, and names its exports the default export", () => {
    const { hooks, url, nextLoad } = setup();
    const cjs = url("node_modules/tensorlab/link/cjs.js");
    const facade = String((hooks.load(virtualUrl(cjs, "facade"), {}, nextLoad) as LoadResult).source);
    const lines = facade.split("\n");
    expect(lines[0]).toBe(`import ${JSON.stringify(virtualUrl(cjs, "require", undefined, true))};`);
    expect(facade).toContain(`export { default } from ${JSON.stringify(cjs)};`);
    expect(facade).toContain("__dispatchHookNs.default);");
  });

  it("generates each marker from its URL alone", () => {
    const { hooks, url, nextLoad } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const step = String((hooks.load(virtualUrl(numba, "step", 0), {}, nextLoad) as LoadResult).source);
    expect(step).toContain("step(");
    expect(step).toContain('"plugin":"ml-ops"');
    const done = String((hooks.load(virtualUrl(numba, "done", 0), {}, nextLoad) as LoadResult).source);
    expect(done).toContain(`import ${JSON.stringify(url("node_modules/ml-ops/numba.js"))};`);
    expect(parseVirtual(virtualUrl(`${numba}?copy=2`, "step", 3, true))).toEqual({
      original: `${numba}?copy=2`,
      kind: "step",
      index: 3,
      commonjs: true,
    });
  });

  it("gives require() of a watched CommonJS module a CommonJS facade on registerHooks, and changes no module's own source", async () => {
    const { hooks, url, nextLoad, resolved } = setup("registerHooks");
    const cjs = url("node_modules/tensorlab/link/cjs.js");
    const viaRequire = hooks.resolve(cjs, { conditions: ["require"] }, resolved(cjs, "commonjs")) as ResolveResult;
    expect(viaRequire).toEqual({ url: virtualUrl(cjs, "cjs-facade"), format: "commonjs" });
    const facade = hooks.load(viaRequire.url, {}, nextLoad) as LoadResult;
    expect(facade.format).toBe("commonjs");
    expect(String(facade.source)).toContain(`module.exports = require(${JSON.stringify(fileURLToPath(cjs))});`);
    expect(String(facade.source)).toContain("runtime.requireRegistrations(");
    // The original itself, as the next hook gave it.
    expect(hooks.load(cjs, {}, nextLoad)).toBe(nextLoad(cjs));
    // A watched ES module is the same, but for the one line that signals its table, appended.
    const numba = url("node_modules/tensorlab/link/numba.js");
    const loaded = String((hooks.load(numba, {}, nextLoad) as LoadResult).source);
    expect(loaded.startsWith(String(nextLoad(numba).source))).toBe(true);
    expect(loaded.slice(String(nextLoad(numba).source).length)).toMatch(
      /^;import \* as __dispatchHook0 from [^\n]+signalEvaluated[^\n]+\n$/,
    );
    // module.register does not see require(): nothing to redirect there.
    const off = setup("register");
    const offCjs = off.url("node_modules/tensorlab/link/cjs.js");
    expect((await off.hooks.resolve(offCjs, { conditions: ["require"] }, async () => ({ url: offCjs, format: "commonjs" }))).url).toBe(
      offCjs,
    );
  });

  it("reports a watched ES module with plugins that was loaded without its facade: it signals, its plugins' modules did not run", () => {
    const { hooks, url, nextLoad, reports } = setup("registerHooks");
    const numba = url("node_modules/tensorlab/link/numba.js");
    const loaded = String((hooks.load(numba, {}, nextLoad) as LoadResult).source);
    expect(loaded).toContain("signalEvaluated");
    expect(reports.at(-1)).toMatchObject({ type: "failed", url: numba });
    expect((reports.at(-1) as { message: string }).message).toContain("registration modules did not run");
  });

  it("fails open: a facade that cannot be built stands in for the original unchanged, and the failure is reported", () => {
    const { hooks, url, reports } = setup();
    const gone = url("node_modules/tensorlab/link/gone.js");
    const out = hooks.load(virtualUrl(gone, "facade"), {}, () => ({ format: "module", source: null })) as LoadResult;
    expect(String(out.source)).toBe(`export * from ${JSON.stringify(gone)};\n`);
    expect(reports.at(-1)).toMatchObject({ type: "failed", url: gone });
  });

  it("sends nobody new to a facade once disabled, but still serves the virtual modules it handed out", () => {
    const { hooks, url, nextLoad } = setup();
    hooks.disable();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const result = { url: numba, format: "module" };
    expect(hooks.resolve(numba, {}, () => result)).toBe(result);
    const cjs = url("node_modules/tensorlab/link/cjs.js");
    expect(hooks.load(cjs, {}, nextLoad)).toBe(nextLoad(cjs));
    expect(String((hooks.load(virtualUrl(numba, "facade"), {}, nextLoad) as LoadResult).source)).toContain("export * from");
  });
});
