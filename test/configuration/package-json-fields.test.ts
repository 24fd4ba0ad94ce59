/** Validation of dispatchHook fields, through discover() over real package.json files. */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { discover } from "../../src/hooks/discovery.js";
import { makeTree } from "../integration/fixture.js";

const pkg = (value: unknown) => JSON.stringify(value);

describe("dispatchHook fields", () => {
  it("reads the framework's {backend} pattern and the plugin's registrations and expects", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { tensorlab: "1", "ml-ops": "1" } }),
      "node_modules/tensorlab/package.json": pkg({
        name: "tensorlab",
        dispatchHook: { backends: { "*": { module: "./link/{backend}/dispatch/basic.js", export: "{backend}Funcify" } } },
      }),
      "node_modules/ml-ops/package.json": pkg({
        name: "ml-ops",
        dispatchHook: { registrations: { numba: "./dispatch/numba.js" }, expects: { numba: ["PoolLayer", "Im2Col"] } },
      }),
    });
    const config = discover({ root });
    expect(config.problems).toEqual([]);
    expect(config.rules).toEqual([
      {
        declaredIn: join(root, "node_modules/tensorlab/package.json"),
        packageName: "tensorlab",
        roots: [`${pathToFileURL(join(root, "node_modules/tensorlab")).href}/`],
        subpath: "link/{backend}/dispatch/basic.js",
        backend: undefined,
        exportName: "{backend}Funcify",
      },
    ]);
    expect(config.plugins).toEqual([
      {
        name: "ml-ops",
        declaredIn: join(root, "node_modules/ml-ops/package.json"),
        registrations: { numba: pathToFileURL(join(root, "node_modules/ml-ops/dispatch/numba.js")).href },
        expects: { numba: ["PoolLayer", "Im2Col"] },
      },
    ]);
  });

  it("substitutes a named backend into its module and export", () => {
    const root = makeTree({
      "package.json": pkg({
        name: "app",
        dispatchHook: { backends: { jax: { module: "./backends/{backend}.js", export: "{backend}Table" } } },
      }),
    });
    const [rule] = discover({ root }).rules;
    expect(rule).toMatchObject({ backend: "jax", subpath: "backends/jax.js", exportName: "jaxTable", packageName: "app" });
  });

  it("lets a plugin declare backends in another package's files", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { plain: "1", shim: "1" } }),
      "node_modules/plain/package.json": pkg({ name: "plain" }),
      "node_modules/shim/package.json": pkg({
        name: "shim",
        dispatchHook: { backends: { numba: { package: "plain", module: "./numba.js", export: "table" } } },
      }),
    });
    const [rule] = discover({ root }).rules;
    expect(rule?.packageName).toBe("plain");
    expect(rule?.roots).toEqual([`${pathToFileURL(join(root, "node_modules/plain")).href}/`]);
  });

  it("names the file and the key of an unknown option, and suggests the nearest", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { "ml-ops": "1" } }),
      "node_modules/ml-ops/package.json": pkg({ name: "ml-ops", dispatchHook: { registation: { numba: "./n.js" } } }),
    });
    const [problem] = discover({ root }).problems;
    expect(problem?.code).toBe("ERR_DISPATCH_CONFIG_INVALID");
    expect(problem?.key).toBe("registation");
    expect(problem?.file).toBe(join(root, "node_modules/ml-ops/package.json"));
    expect(problem?.message).toContain(
      'Invalid option in package.json "dispatchHook" of ml-ops: "registation" (did you mean "registrations"?)',
    );
    expect(problem?.fix).toContain('Rename it to "registrations"');
    // The package is named once (found by a new user's trial: "… of ml-ops: … (in package.json "dispatchHook" of ml-ops, …)").
    expect(problem?.message.split('"dispatchHook" of ml-ops')).toHaveLength(2);
    expect(problem?.message).toContain(`(in ${join(root, "node_modules/ml-ops/package.json")})`);
  });

  // Two backends on one module are a problem (only the first would be watched); two declarations given in code for
  // modules of the same relative path in different directories are two modules (a review found them taken for one).
  it("two backends on one module are a problem; the same relative path in two directories is two modules", () => {
    const root = makeTree({ "package.json": pkg({ name: "app" }) });
    const field = (backend: string) => ({ backends: { [backend]: { module: "./dispatch.js", export: "table" } } });
    const apart = discover({
      root,
      inline: [
        { field: field("cpu"), dir: "a" },
        { field: field("gpu"), dir: "b" },
      ],
    });
    expect(apart.problems).toEqual([]);
    expect(apart.rules.map((r) => r.backend)).toEqual(["cpu", "gpu"]);
    const together = discover({
      root,
      inline: [
        { field: field("cpu"), dir: "a" },
        { field: field("gpu"), dir: "a" },
      ],
    });
    expect(together.problems.map((p) => p.code)).toEqual(["ERR_DISPATCH_CONFIG_DUPLICATE"]);
    expect(together.rules.map((r) => r.backend)).toEqual(["cpu"]);
  });

  it("names where a declaration given in code came from once, not twice", () => {
    const root = makeTree({ "package.json": pkg({ name: "app" }) });
    const [problem] = discover({ root, inline: [{ field: { registation: {} } as never }] }).problems;
    expect(problem?.message.split("install() options")).toHaveLength(2);
  });

  it("reports fields of the wrong type and keeps the good parts", () => {
    const root = makeTree({
      "package.json": pkg({
        name: "app",
        dispatchHook: {
          backends: {
            numba: { module: "./numba.js", export: "table" },
            jax: { module: 3, export: "t" },
            mlx: "nope",
            pytorch: { module: "./p.js", export: "t", exprot: "x" },
            "*": { module: "./no-placeholder.js", export: "t" },
            bad: { module: "./b.js", export: "t", package: "../evil" },
          },
          registrations: { numba: 5 },
          expects: { numba: "PoolLayer" },
        },
      }).replace('"registrations":{', '"registrations":{"__proto__":"./x.js","constructor":"./y.js",'),
    });
    const config = discover({ root });
    expect(config.rules.map((r) => r.backend)).toEqual(["numba"]);
    expect(config.problems.map((p) => p.key)).toEqual([
      "backends.jax.module",
      "backends.mlx",
      "backends.pytorch.exprot",
      "backends.*.module",
      "backends.bad.package",
      "registrations.__proto__",
      "registrations.constructor",
      "registrations.numba",
      "expects.numba",
    ]);
    expect(config.problems.every((p) => p.code === "ERR_DISPATCH_CONFIG_INVALID")).toBe(true);
    expect(Object.prototype).not.toHaveProperty("./x.js");
  });

  it("refuses paths that leave the package or are absolute, with a code", () => {
    const root = makeTree({
      "package.json": pkg({
        name: "app",
        dispatchHook: {
          backends: { numba: { module: "../outside.js", export: "t" } },
          registrations: { numba: "/etc/passwd", jax: "./ok/../../../up.js", mlx: "file:///x.js", pytorch: "C:\\\\x.js" },
        },
      }),
    });
    const config = discover({ root });
    expect(config.problems.map((p) => [p.code, p.key])).toEqual([
      ["ERR_DISPATCH_CONFIG_PATH", "backends.numba.module"],
      ["ERR_DISPATCH_CONFIG_PATH", "registrations.numba"],
      ["ERR_DISPATCH_CONFIG_PATH", "registrations.jax"],
      ["ERR_DISPATCH_CONFIG_PATH", "registrations.mlx"],
      ["ERR_DISPATCH_CONFIG_PATH", "registrations.pytorch"],
    ]);
    expect(config.rules).toEqual([]);
    expect(config.plugins).toEqual([]);
  });

  it("reports malformed package.json and a non-object field, naming the file", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { broken: "1", odd: "1" } }),
      "node_modules/broken/package.json": "{ not json",
      "node_modules/odd/package.json": pkg({ name: "odd", dispatchHook: [] }),
    });
    const problems = discover({ root }).problems;
    expect(problems.map((p) => [p.code, p.file])).toEqual([
      ["ERR_DISPATCH_CONFIG_JSON", join(root, "node_modules/broken/package.json")],
      ["ERR_DISPATCH_CONFIG_INVALID", join(root, "node_modules/odd/package.json")],
    ]);
  });

  it("reports a backend declared twice with different modules", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { a: "1", b: "1" } }),
      "node_modules/a/package.json": pkg({ name: "a", dispatchHook: { backends: { numba: { module: "./n.js", export: "t" } } } }),
      "node_modules/b/package.json": pkg({ name: "b", dispatchHook: { backends: { numba: { module: "./other.js", export: "t" } } } }),
    });
    const config = discover({ root });
    expect(config.problems.map((p) => p.code)).toEqual(["ERR_DISPATCH_CONFIG_DUPLICATE"]);
    expect(config.problems[0]?.message).toContain("declared twice with different modules");
    expect(config.rules).toHaveLength(2);
  });

  it("reads the same declaration from two copies of a package as one rule with two roots", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dependencies: { tensorlab: "1", kit: "1" } }),
      "node_modules/tensorlab/package.json": pkg({
        name: "tensorlab",
        dispatchHook: { backends: { numba: { module: "./n.js", export: "t" } } },
      }),
      "node_modules/kit/package.json": pkg({ name: "kit", dependencies: { tensorlab: "2" } }),
      "node_modules/kit/node_modules/tensorlab/package.json": pkg({
        name: "tensorlab",
        dispatchHook: { backends: { numba: { module: "./n.js", export: "t" } } },
      }),
    });
    const config = discover({ root, transitive: true });
    expect(config.problems).toEqual([]);
    expect(config.rules).toHaveLength(1);
    expect(config.rules[0]?.roots).toHaveLength(2);
  });

  it("uses the registry's one rule for backend names: whitespace and separators are refused", () => {
    const root = makeTree({
      "package.json": pkg({ name: "app", dispatchHook: { expects: { "my backend": ["X"], "a/b": ["X"], ok: ["X"] } } }),
    });
    const config = discover({ root });
    expect(config.problems.map((p) => p.key)).toEqual(["expects.my backend", "expects.a/b"]);
    expect(config.problems[0]?.message).toContain("whitespace or a path separator");
  });
});
