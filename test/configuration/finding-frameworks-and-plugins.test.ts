import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { appRoot, Discovery, discover } from "../../src/hooks/discovery.js";
import { makeTree } from "../integration/fixture.js";

const pkg = (value: unknown) => JSON.stringify(value);
const framework = pkg({
  name: "tensorlab",
  dispatchHook: { backends: { "*": { module: "./link/{backend}/basic.js", export: "{backend}Funcify" } } },
});
const plugin = pkg({ name: "ml-ops", dependencies: { tensorlab: "1" }, dispatchHook: { registrations: { numba: "./numba.js" } } });

describe("where discovery starts", () => {
  it("at the entry point's package, wherever node was started", () => {
    const root = makeTree({ "app/package.json": pkg({ name: "app" }), "app/src/main.mjs": "", "elsewhere/.keep": "" });
    expect(appRoot({ entry: join(root, "app/src/main.mjs") })).toBe(join(root, "app"));
    // The working directory does not matter when there is an entry point.
    expect(appRoot({ entry: join(root, "app/src/main.mjs"), root: undefined })).toBe(join(root, "app"));
    expect(appRoot({ root: join(root, "app/src") })).toBe(join(root, "app"));
  });

  it("at the working directory's package when there is no entry point (node -e)", () => {
    expect(appRoot({ entry: undefined })).toBe(process.cwd());
    expect(appRoot({ entry: "" })).toBe(process.cwd());
  });

  it("at the working directory's package when the entry point is a tool's, inside node_modules (vitest, jest)", () => {
    const root = makeTree({ "node_modules/tool/package.json": pkg({ name: "tool" }), "node_modules/tool/bin.mjs": "" });
    // The test runs in the repository, whose package.json is the working directory's.
    expect(appRoot({ entry: join(root, "node_modules/tool/bin.mjs") })).toBe(process.cwd());
  });
});

describe("Discovery", () => {
  it("reads the app and its direct dependencies eagerly, and nothing else", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { direct: "1" } }),
      "node_modules/direct/package.json": pkg({ name: "direct" }),
      "node_modules/transitive/package.json": pkg({ name: "transitive", dispatchHook: { backends: 5 } }),
    });
    const config = discover({ root });
    expect(config.files).toEqual([join(root, "package.json"), join(root, "node_modules/direct/package.json")]);
    expect(config.problems).toEqual([]);
    expect(config.root).toBe(root);
  });

  it("learns a package's declarations when the first module of its scope is resolved", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app" }),
      "node_modules/tensorlab/package.json": framework,
      "node_modules/tensorlab/link/numba/basic.js": "",
      "node_modules/other/package.json": pkg({ name: "other" }),
      "node_modules/other/lib/deep/x.js": "",
    });
    const discovery = new Discovery({ root });
    expect(discovery.config().rules).toEqual([]);
    const before = discovery.version;
    expect(discovery.learn(pathToFileURL(join(root, "node_modules/other/lib/deep/x.js")).href)).toBe(false);
    expect(discovery.learn(pathToFileURL(join(root, "node_modules/tensorlab/link/numba/basic.js")).href)).toBe(true);
    expect(discovery.version).toBeGreaterThan(before);
    expect(discovery.config().rules.map((r) => r.packageName)).toEqual(["tensorlab"]);
    // A scope is read once: the same directory again costs one map lookup and reads nothing.
    const files = discovery.config().files.length;
    expect(discovery.learn(`${pathToFileURL(join(root, "node_modules/tensorlab/link/numba/basic.js")).href}?copy=2`)).toBe(false);
    expect(discovery.config().files).toHaveLength(files);
    expect(discovery.learn("node:fs")).toBe(false);
  });

  it("finds a plugin beside its framework anywhere in the tree, before anything imports the plugin", () => {
    // app → toolkit → (tensorlab, ml-ops): ml-ops is not a dependency of the app.
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { toolkit: "1" } }),
      "node_modules/toolkit/package.json": pkg({ name: "toolkit", dependencies: { tensorlab: "1", "ml-ops": "1" } }),
      "node_modules/toolkit/index.js": "",
      "node_modules/tensorlab/package.json": framework,
      "node_modules/tensorlab/link/numba/basic.js": "",
      "node_modules/ml-ops/package.json": plugin,
    });
    const discovery = new Discovery({ root });
    expect(discovery.config().plugins).toEqual([]);
    // toolkit loads first; it depends on nothing known yet, so only its own package.json is read.
    discovery.learn(pathToFileURL(join(root, "node_modules/toolkit/index.js")).href);
    expect(discovery.config().plugins).toEqual([]);
    // The framework loads: toolkit depends on it, so toolkit's dependencies are read, ml-ops among them.
    discovery.learn(pathToFileURL(join(root, "node_modules/tensorlab/link/numba/basic.js")).href);
    expect(discovery.config().plugins.map((p) => p.name)).toEqual(["ml-ops"]);
  });

  it("reads the dependencies of a package that depends on an already known framework at once", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { tensorlab: "1" } }),
      "node_modules/tensorlab/package.json": framework,
      "node_modules/toolkit/package.json": pkg({ name: "toolkit", dependencies: { tensorlab: "1", "ml-ops": "1" } }),
      "node_modules/toolkit/index.js": "",
      "node_modules/ml-ops/package.json": plugin,
    });
    const discovery = new Discovery({ root });
    discovery.learn(pathToFileURL(join(root, "node_modules/toolkit/index.js")).href);
    expect(discovery.config().plugins.map((p) => p.name)).toEqual(["ml-ops"]);
  });

  it("walks the whole tree when asked (doctor), through nested copies", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { toolkit: "1" } }),
      "node_modules/toolkit/package.json": pkg({ name: "toolkit", dependencies: { core: "1" } }),
      "node_modules/toolkit/node_modules/core/package.json": pkg({ name: "core", dependencies: { "ml-ops": "1" } }),
      "node_modules/ml-ops/package.json": plugin,
    });
    expect(discover({ root }).plugins).toEqual([]);
    expect(discover({ root, transitive: true }).plugins.map((p) => p.name)).toEqual(["ml-ops"]);
  });

  it("reads the DISPATCH_HOOK_CONFIG file and declarations given in code", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app" }),
      "config/dispatch.json": pkg({ registrations: { numba: "./regs/numba.js" } }),
      "config/broken.json": "nope",
      "config/wrapped.json": pkg({ dispatchHook: { registrations: { numba: "./regs/numba.js" } } }),
    });
    const config = discover({
      root,
      configFile: "config/dispatch.json",
      inline: [
        { field: { backends: { jax: { module: "./jax.js", export: "t" } } } },
        { field: { expects: { jax: ["X"] } }, dir: "plug", name: "plug" },
      ],
    });
    expect(config.plugins.map((p) => [p.name, p.registrations])).toEqual([
      [join(root, "config/dispatch.json"), { numba: pathToFileURL(join(root, "config/regs/numba.js")).href }],
      ["plug", {}],
    ]);
    expect(config.rules.map((r) => r.backend)).toEqual(["jax"]);
    expect(discover({ root, configFile: "config/broken.json" }).problems.map((p) => p.code)).toEqual(["ERR_DISPATCH_CONFIG_JSON"]);
    // A file shaped like a package.json, the field under a "dispatchHook" key: read, and the shape named.
    const wrapped = discover({ root, configFile: "config/wrapped.json" });
    expect(wrapped.plugins.map((p) => Object.keys(p.registrations))).toEqual([["numba"]]);
    expect(wrapped.problems.map((p) => [p.code, p.message])).toEqual([
      ["ERR_DISPATCH_CONFIG_INVALID", expect.stringContaining('move the keys inside "dispatchHook" to the top level')],
    ]);
    const off = new Discovery({ root, packages: false });
    expect(off.config().files).toEqual([]);
    expect(off.learn(pathToFileURL(join(root, "package.json")).href)).toBe(false);
  });

  it("resolves symlinked (workspace) packages to their real directory", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { tensorlab: "1" } }),
      "packages/tensorlab/package.json": pkg({
        name: "tensorlab",
        dispatchHook: { backends: { numba: { module: "./numba.js", export: "t" } } },
      }),
    });
    mkdirSync(join(root, "node_modules"));
    symlinkSync(join(root, "packages/tensorlab"), join(root, "node_modules/tensorlab"), "dir");
    expect(discover({ root }).rules[0]?.roots).toEqual([`${pathToFileURL(join(root, "packages/tensorlab")).href}/`]);
  });

  it("reads a linked package's field once, met at its link and then at its real directory (npm install ./pkg)", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { "ml-ops": "file:ml-ops" } }),
      "ml-ops/package.json": pkg({ name: "ml-ops", dispatchHook: { registation: {}, registrations: { numba: "./numba.js" } } }),
      "ml-ops/numba.js": "",
    });
    mkdirSync(join(root, "node_modules"));
    symlinkSync(join(root, "ml-ops"), join(root, "node_modules/ml-ops"), "dir");
    const discovery = new Discovery({ root });
    discovery.learn(pathToFileURL(join(root, "ml-ops/numba.js")).href);
    const config = discovery.config();
    expect(config.plugins.map((p) => p.name)).toEqual(["ml-ops"]);
    expect(config.problems.map((p) => p.key)).toEqual(["registation"]);
  });

  it("skips a nested package.json that only sets the module type, and finds the package above it", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app" }),
      "node_modules/tensorlab/package.json": framework,
      "node_modules/tensorlab/dist/esm/package.json": pkg({ type: "module" }),
      "node_modules/tensorlab/dist/esm/index.js": "",
    });
    const discovery = new Discovery({ root });
    expect(discovery.learn(pathToFileURL(join(root, "node_modules/tensorlab/dist/esm/index.js")).href)).toBe(true);
    expect(discovery.config().rules.map((r) => r.packageName)).toEqual(["tensorlab"]);
  });

  it("tells a module's format as Node does: the extension, then the nearest package.json's type", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", type: "module" }),
      "dist/commonjs/package.json": pkg({ type: "commonjs" }),
    });
    const discovery = new Discovery({ root, packages: false });
    const at = (p: string) => pathToFileURL(join(root, p)).href;
    expect(discovery.formatOf(at("index.js"))).toBe("module");
    expect(discovery.formatOf(`${at("dist/commonjs/index.js")}?x`)).toBe("commonjs");
    expect(discovery.formatOf(at("a.cjs"))).toBe("commonjs");
    expect(discovery.formatOf(at("dist/commonjs/a.mjs"))).toBe("module");
    expect(discovery.formatOf(at("data.json"))).toBeUndefined();
    expect(discovery.formatOf("node:fs")).toBeUndefined();
  });
});
