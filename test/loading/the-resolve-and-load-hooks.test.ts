import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { Discovery } from "../../src/hooks/discovery.js";
import { runtimeLocation } from "../../src/hooks/hook-api.js";
import type { HookReport, LoadResult, ResolveResult } from "../../src/hooks/module-facts.js";
import { createHooks } from "../../src/hooks/node-hooks.js";
import { originalUrl, parseOriginal, parseVirtual, virtualUrl } from "../../src/hooks/virtual-modules.js";
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
  // The next hook loads an original's URL as the file, as Node does.
  const nextLoad = (href: string) => files[parseOriginal(href) ?? href] ?? { format: "module", source: "export {};\n" };
  const resolved =
    (href: string, format: string | null = "module") =>
    () =>
      ({ url: href, format }) as ResolveResult;
  return { root, hooks, reports, url, nextLoad, resolved, loadWanted };
}

describe("the resolve hook", () => {
  it("asks for load() exactly when it hands out a URL only load() serves, and never for a module it passes through", () => {
    const { hooks, url, resolved, loadWanted } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const cjs = url("node_modules/tensorlab/link/cjs.js");
    hooks.resolve("tensorlab", { parentURL: url("main.mjs") }, () => ({ url: url("node_modules/tensorlab/index.js"), format: "module" }));
    hooks.resolve("./x.json", { parentURL: url("main.mjs") }, () => ({ url: url("x.json"), format: "json" }));
    expect(loadWanted.count).toBe(0);
    // A watched module's own URL: load() serves its facade there.
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("main.mjs") }, resolved(numba));
    expect(loadWanted.count).toBe(1);
    hooks.resolve(virtualUrl(numba, "step", 0), {}, () => ({ url: "never" }));
    expect(loadWanted.count).toBe(2);
    hooks.resolve(originalUrl(numba), {}, () => ({ url: "never" }));
    expect(loadWanted.count).toBe(3);
    const viaRequire = hooks.resolve(
      "tensorlab/link/cjs.js",
      { parentURL: url("main.cjs"), conditions: ["require"] },
      resolved(cjs, "commonjs"),
    );
    expect((viaRequire as ResolveResult).url).toBe(cjs);
    expect(loadWanted.count).toBe(4);
  });

  it("lets load() step aside once every URL handed out has loaded, and asks again only for one Node has not cached", () => {
    const { hooks, url, resolved, nextLoad, loadWanted } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const step = virtualUrl(numba, "step", 0);
    const done = virtualUrl(numba, "done", 0);
    const last = virtualUrl(numba, "step", 1);
    const early = [virtualUrl(numba, "early", 0), virtualUrl(numba, "early", 1)];
    const other = () => hooks.resolve("./other.js", { parentURL: url("main.mjs") }, resolved(url("other.js")));
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("main.mjs") }, resolved(numba));
    hooks.load(numba, {}, nextLoad);
    other();
    // The facade's source names the original and its markers, which have not loaded yet.
    expect(loadWanted.idle).toBe(0);
    for (const imported of [originalUrl(numba), step, done, last, ...early]) {
      hooks.resolve(imported, { parentURL: numba }, () => ({ url: "never" }));
      hooks.load(imported, {}, nextLoad);
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
    // require() keys its cache by file name, and require.cache does not hold the module here:
    // Node would call load() for it, so load() is wanted again, and kept until it has served it.
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("later.cjs"), conditions: ["require"] }, resolved(numba));
    expect(loadWanted.count).toBe(asked + 1);
    other();
    expect(loadWanted.idle).toBe(1);
    hooks.load(numba, { conditions: ["require"] }, nextLoad);
    other();
    expect(loadWanted.idle).toBe(2);
  });

  it("never lets load() go while it builds a generated module, even when something resolves meanwhile", () => {
    const { root, url, resolved, nextLoad } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    let idle = 0;
    let resolvedWhileBuilding = 0;
    const other = () => hooks.resolve("./other.js", { parentURL: url("main.mjs") }, resolved(url("other.js")));
    const hooks = createHooks({
      discovery: new Discovery({ root }),
      mode: "registerHooks",
      runtime: runtimeLocation(),
      // Reported while the facade is built, after the module itself counts as loaded and before the
      // URLs its source names are awaited: a resolve() here is one from inside the build (as
      // es-module-lexer's require is, in a thread whose hooks see require()).
      report: (r) => {
        if (r.type !== "facade") return;
        resolvedWhileBuilding++;
        other();
      },
      idle: () => idle++,
    });
    hooks.resolve("tensorlab/link/numba.js", { parentURL: url("main.mjs") }, resolved(numba));
    // The next hook resolves a module too, before the build starts.
    hooks.load(numba, {}, (href) => {
      other();
      return nextLoad(href);
    });
    expect(resolvedWhileBuilding).toBe(1);
    expect(idle).toBe(0);
  });

  it("leaves every URL as Node resolved it: an importer of a watched module gets the module's own URL", () => {
    const { hooks, url, resolved } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const other = { url: url("node_modules/tensorlab/index.js"), format: "module" };
    expect(hooks.resolve("tensorlab", { parentURL: url("main.mjs") }, () => other)).toBe(other);
    expect(hooks.resolve("tensorlab/link/numba.js", { parentURL: url("main.mjs") }, resolved(numba))).toEqual({
      url: numba,
      format: "module",
    });
    // require() of an ES module (require(esm)), JSON, and imports with attributes alike.
    for (const context of [{ conditions: ["require"] }, {}, { importAttributes: { type: "json" } }]) {
      expect((hooks.resolve(numba, context, resolved(numba)) as ResolveResult).url).toBe(numba);
    }
  });

  it("short-circuits the URLs generated code imports: markers and originals never reach the next hook", () => {
    const { hooks, url } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    expect(hooks.resolve(virtualUrl(numba, "step", 0), {}, () => ({ url: "never" }))).toEqual({
      url: virtualUrl(numba, "step", 0),
      format: "module",
      shortCircuit: true,
    });
    expect(hooks.resolve(originalUrl(numba), {}, () => ({ url: "never" }))).toEqual({ url: originalUrl(numba), shortCircuit: true });
  });

  it("resolves an original's URL with the format the rest of the resolve chain gave its module; a TypeScript one with none, by its extension", () => {
    const { hooks, url, resolved } = setup("registerHooks", {
      "node_modules/tensorlab/link/tpu.ts": "export const tpuFuncify = new Map();\n",
      "node_modules/tensorlab/link/npu.mts": "export const npuFuncify = new Map();\n",
      "node_modules/tensorlab/package.json": JSON.stringify({
        name: "tensorlab",
        dispatchHook: {
          backends: {
            numba: { module: "./link/numba.js", export: "numbaFuncify" },
            tpu: { module: "./link/tpu.ts", export: "tpuFuncify" },
            npu: { module: "./link/npu.mts", export: "npuFuncify" },
          },
        },
      }),
      "node_modules/ml-ops/package.json": JSON.stringify({
        name: "ml-ops",
        dispatchHook: { registrations: { numba: "./numba.js", tpu: "./numba.js", npu: "./numba.js" } },
      }),
    });
    const formatOf = (href: string, format: string | null) => {
      hooks.resolve(href, { parentURL: url("main.mjs") }, resolved(href, format));
      return (hooks.resolve(originalUrl(href), {}, () => ({ url: "never" })) as ResolveResult).format;
    };
    // What tsx's resolve says of a .ts file (what its load then passes on to Node's).
    expect(formatOf(url("node_modules/tensorlab/link/tpu.ts"), "module")).toBe("module");
    // Node 22+ leaves a .js file with no "type" to its syntax: its load must be asked with no format.
    expect(formatOf(url("node_modules/tensorlab/link/numba.js"), null)).toBeNull();
    // Nothing after ours said (tsx resolved it before us, on Node 20): the extension decides.
    expect(formatOf(url("node_modules/tensorlab/link/npu.mts"), null)).toBe("module");
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
    expect(String(loaded.source)).toMatch(/^export const numbaFuncify = new Map\(\);\n;import\*as __dh0 from"[^"]+numba\.js";/);
    expect(String(loaded.source)).toContain("signalEvaluated as __dh0s");
    expect(reports.map((r) => r.type)).toEqual(["config", "facade"]);
  });

  it("works with asynchronous next hooks (module.register)", async () => {
    const { hooks, url, nextLoad } = setup("register");
    const numba = url("node_modules/tensorlab/link/numba.js");
    const result = await hooks.resolve(numba, {}, async () => ({ url: numba, format: "module" }));
    expect(result.url).toBe(numba);
    const facade = await hooks.load(numba, {}, async (href: string) => nextLoad(href));
    expect(String(facade.source)).toContain(`export * from ${JSON.stringify(originalUrl(numba))};`);
  });
});

describe("the load hook", () => {
  it("serves an ES facade at the module's own URL: the original's exports, from its second URL, then the markers", () => {
    const { hooks, url, nextLoad, reports } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const facade = String((hooks.load(numba, {}, nextLoad) as LoadResult).source);
    expect(facade.split("\n").filter(Boolean)).toEqual([
      `export * from ${JSON.stringify(originalUrl(numba))};`,
      `export { default } from ${JSON.stringify(originalUrl(numba))};`,
      `import ${JSON.stringify(virtualUrl(numba, "step", 0))};`,
      `import ${JSON.stringify(virtualUrl(numba, "early", 0))};`,
      `import ${JSON.stringify(url("node_modules/ml-ops/numba.js"))};`,
      `import ${JSON.stringify(virtualUrl(numba, "done", 0))};`,
      `import ${JSON.stringify(virtualUrl(numba, "step", 1))};`,
      `import ${JSON.stringify(virtualUrl(numba, "early", 1))};`,
    ]);
    const jax = url("node_modules/tensorlab/link/jax.js");
    const jaxFacade = String((hooks.load(jax, {}, nextLoad) as LoadResult).source);
    expect(jaxFacade).not.toContain("default");
    // A registration module that does not exist is recorded by its step, not imported.
    expect(jaxFacade).toContain(JSON.stringify(virtualUrl(jax, "step", 0)));
    expect(jaxFacade).not.toContain("missing.js");
    expect(reports.filter((r) => r.type === "facade").map((r) => (r as { url: string }).url)).toEqual([numba, jax]);
  });

  it("serves an ES original at its second URL with its own URL: import.meta answers it, and stack frames name it", () => {
    const { hooks, url } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const source = "export const where = import.meta.url;\n//# sourceMappingURL=numba.js.map\n";
    const out = String((hooks.load(originalUrl(numba), {}, () => ({ format: "module", source })) as LoadResult).source);
    const lines = out.split("\n");
    // Same lines, same columns: the expression is replaced by a call of the same length.
    expect(lines[0]).toBe("export const where = _dhMeta0$().url;");
    expect(lines[2]).toContain(`import.meta.url=${JSON.stringify(numba)}`);
    expect(lines.slice(3)).toEqual([`//# sourceURL=${numba}`, "//# sourceMappingURL=numba.js.map", ""]);
    // A CommonJS original is Node's own, untouched.
    const cjs = url("node_modules/tensorlab/link/cjs.js");
    const loaded = { format: "commonjs", source: null };
    expect(hooks.load(originalUrl(cjs), {}, () => loaded)).toBe(loaded);
  });

  it("loads a CommonJS original with require() first (its original URL where the hooks see require(), else its file), and names its exports the default export", () => {
    for (const mode of ["registerHooks", "register"] as const) {
      const { hooks, url, nextLoad } = setup(mode);
      const cjs = url("node_modules/tensorlab/link/cjs.js");
      const facade = String((hooks.load(cjs, {}, nextLoad) as LoadResult).source);
      const lines = facade.split("\n");
      const marker = virtualUrl(cjs, "require", undefined, true);
      expect(lines[0]).toBe(`import ${JSON.stringify(marker)};`);
      expect(facade).toContain(`export { default } from ${JSON.stringify(originalUrl(cjs))};`);
      expect(facade).toContain("__dispatchHookNs.default);");
      const required = String((hooks.load(marker, {}, nextLoad) as LoadResult).source);
      expect(required).toContain(`(${JSON.stringify(mode === "registerHooks" ? originalUrl(cjs) : fileURLToPath(cjs))});`);
    }
  });

  it("off-thread, serves a CommonJS original with no source without asking the chain: Node hands out the module its require marker required", async () => {
    const { hooks, url } = setup("register");
    const cjs = url("node_modules/tensorlab/link/cjs.js");
    const never = async () => {
      throw new Error("the chain was asked");
    };
    expect(await hooks.load(originalUrl(cjs), { format: "commonjs" }, never)).toEqual({
      format: "commonjs",
      source: null,
      shortCircuit: true,
    });
  });

  it("off-thread, has a CommonJS registration module required by its done marker, which the facade imports in its place", () => {
    const { hooks, url, nextLoad } = setup("register", {
      "node_modules/ml-ops/package.json": JSON.stringify({ name: "ml-ops", dispatchHook: { registrations: { numba: "./numba.cjs" } } }),
      "node_modules/ml-ops/numba.cjs": "",
    });
    const numba = url("node_modules/tensorlab/link/numba.js");
    const registration = url("node_modules/ml-ops/numba.cjs");
    const facade = String((hooks.load(numba, {}, nextLoad) as LoadResult).source);
    expect(facade).not.toContain(JSON.stringify(registration));
    expect(facade).toContain(`import ${JSON.stringify(virtualUrl(numba, "done", 0))};`);
    const done = String((hooks.load(virtualUrl(numba, "done", 0), {}, nextLoad) as LoadResult).source);
    expect(done).toContain(`createRequire(${JSON.stringify(registration)})(${JSON.stringify(fileURLToPath(registration))});`);
    expect(done.indexOf("createRequire(")).toBeLessThan(done.indexOf("finish("));
    expect(done).not.toContain(`import ${JSON.stringify(registration)}`);
  });

  it("serves another loader's wrapper of a watched module as it is (import-in-the-middle's ?iitm=true), and the module it wraps gets the facade", () => {
    const { hooks, url, nextLoad, reports } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const wrapper = `${numba}?iitm=true`;
    const wrapped = {
      format: "module",
      source: `import * as namespace from ${JSON.stringify(numba)};\nexport const numbaFuncify = namespace.numbaFuncify;\n`,
    };
    expect(hooks.load(wrapper, {}, () => wrapped)).toBe(wrapped);
    expect(reports.filter((r) => r.type === "facade")).toEqual([]);
    expect(String((hooks.load(numba, {}, nextLoad) as LoadResult).source)).toContain(
      `export * from ${JSON.stringify(originalUrl(numba))};`,
    );
    // A module instance of its own (a cache-busting query) still gets its facade.
    const copy = `${numba}?v=2`;
    expect(String((hooks.load(copy, {}, () => nextLoad(numba)) as LoadResult).source)).toContain(originalUrl(copy));
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

  it("gives require() of a watched CommonJS module the module itself, an epilogue appended, on registerHooks only", () => {
    const { hooks, url } = setup("registerHooks");
    const cjs = url("node_modules/tensorlab/link/cjs.js");
    const source = "exports.cjsFuncify = new Map();\n";
    const next = () => ({ format: "commonjs", source });
    const required = hooks.load(cjs, { conditions: ["require"] }, next) as LoadResult;
    expect(required.format).toBe("commonjs");
    expect(String(required.source).startsWith(source)).toBe(true);
    expect(String(required.source).slice(source.length)).toMatch(/^;\{const __dh0=require\([^\n]+requireWhenLoaded\(module,[^\n]+\n$/);
    // module.register sees such a require() only where another hook returned a parent's source: left to Node.
    const off = setup("register");
    const loaded = next();
    expect(off.hooks.load(off.url("node_modules/tensorlab/link/cjs.js"), { conditions: ["require"] }, () => loaded)).toBe(loaded);
  });

  it("gives a watched ES module that no plugin has a registration module for the signal, appended, at its own URL", () => {
    const { hooks, url, nextLoad } = setup("registerHooks", {
      "node_modules/ml-ops/package.json": JSON.stringify({ name: "ml-ops", dispatchHook: { registrations: { jax: "./missing.js" } } }),
    });
    const numba = url("node_modules/tensorlab/link/numba.js");
    const original = String(nextLoad(numba).source);
    const loaded = String((hooks.load(numba, {}, nextLoad) as LoadResult).source);
    expect(loaded.startsWith(original)).toBe(true);
    expect(loaded.slice(original.length)).toMatch(/^;import\*as __dh0 from[^\n]+signalEvaluated[^\n]+\n$/);
  });

  it("fails open: what the next hook throws reaches Node unchanged, and a module of ours that cannot be built is reported and stands in empty", () => {
    const { hooks, url, reports, nextLoad } = setup();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const gone = Object.assign(new Error("ENOENT"), { code: "ENOENT" });
    expect(() =>
      hooks.load(numba, {}, () => {
        throw gone;
      }),
    ).toThrow(gone);
    expect(reports.filter((r) => r.type === "failed")).toEqual([]);
    // The plan has steps 0 and 1 only.
    const out = hooks.load(virtualUrl(numba, "step", 7), {}, nextLoad) as LoadResult;
    expect(out).toEqual({ format: "module", shortCircuit: true, source: "" });
    expect(reports.at(-1)).toMatchObject({ type: "failed", url: numba });
  });

  it("changes nothing once disabled, but still serves the URLs it handed out", () => {
    const { hooks, url, nextLoad } = setup();
    hooks.disable();
    const numba = url("node_modules/tensorlab/link/numba.js");
    const result = { url: numba, format: "module" };
    expect(hooks.resolve(numba, {}, () => result)).toBe(result);
    expect(hooks.load(numba, {}, nextLoad)).toBe(nextLoad(numba));
    expect(String((hooks.load(virtualUrl(numba, "step", 0), {}, nextLoad) as LoadResult).source)).toContain("step(");
    expect(String((hooks.load(originalUrl(numba), {}, nextLoad) as LoadResult).source)).toContain(`//# sourceURL=${numba}`);
  });
});
