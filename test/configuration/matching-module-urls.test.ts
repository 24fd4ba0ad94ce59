import { describe, expect, it } from "vitest";
import type { WatchRule } from "../../src/hooks/declarations.js";
import { Matcher } from "../../src/hooks/matcher.js";

const pattern: WatchRule = {
  declaredIn: "/app/node_modules/tensorlab/package.json",
  packageName: "tensorlab",
  roots: ["file:///work/packages/tensor%20lab/"],
  subpath: "link/{backend}/dispatch/basic.js",
  backend: undefined,
  exportName: "{backend}Funcify",
};
const named: WatchRule = {
  declaredIn: "/app/package.json",
  packageName: "@scope/fw",
  roots: [],
  subpath: "backends/jax.js",
  backend: "jax",
  exportName: "jaxTable",
};
const plugins = [
  { name: "ml-ops", declaredIn: "x", registrations: { numba: "file:///app/node_modules/ml-ops/dispatch/numba.js" }, expects: {} },
  { name: "more-ops", declaredIn: "y", registrations: { numba: "file:///app/node_modules/more-ops/numba.js" }, expects: {} },
];

describe("Matcher", () => {
  const matcher = new Matcher([pattern, named], plugins);

  it("a backend declared by name wins over a pattern that also matches its module, in either order", () => {
    const star: WatchRule = { ...named, subpath: "backends/{backend}.js", backend: undefined, exportName: "table" };
    const dflt: WatchRule = { ...named, subpath: "backends/dflt.js", backend: "dflt", exportName: "default" };
    for (const rules of [
      [star, dflt],
      [dflt, star],
    ]) {
      const m = new Matcher(rules);
      expect(m.match("file:///app/node_modules/@scope/fw/backends/dflt.js")).toMatchObject({ backend: "dflt", exportName: "default" });
      expect(m.match("file:///app/node_modules/@scope/fw/backends/gpu.js")).toMatchObject({ backend: "gpu", exportName: "table" });
    }
  });

  it("maps a backend module URL to its backend, export and registration modules", () => {
    expect(matcher.match("file:///app/node_modules/tensorlab/link/numba/dispatch/basic.js")).toEqual({
      backend: "numba",
      exportName: "numbaFuncify",
      registrations: [
        { plugin: "ml-ops", url: "file:///app/node_modules/ml-ops/dispatch/numba.js" },
        { plugin: "more-ops", url: "file:///app/node_modules/more-ops/numba.js" },
      ],
    });
    expect(matcher.match("file:///app/node_modules/@scope/fw/backends/jax.js")).toEqual({
      backend: "jax",
      exportName: "jaxTable",
      registrations: [],
    });
  });

  it("matches every copy of the package, and its workspace directory", () => {
    for (const url of [
      "file:///app/node_modules/ml-ops/node_modules/tensorlab/link/mlx/dispatch/basic.js",
      "file:///app/node_modules/.pnpm/tensorlab@1.0.0/node_modules/tensorlab/link/mlx/dispatch/basic.js",
      "file:///work/packages/tensor%20lab/link/mlx/dispatch/basic.js",
    ]) {
      expect(matcher.match(url)?.backend).toBe("mlx");
    }
  });

  it("matches URLs with a query or a hash: each is its own module instance", () => {
    expect(matcher.match("file:///app/node_modules/tensorlab/link/jax/dispatch/basic.js?copy=2")?.backend).toBe("jax");
    expect(matcher.match("file:///app/node_modules/tensorlab/link/jax/dispatch/basic.js#frag")?.backend).toBe("jax");
  });

  it("decodes an encoded backend segment", () => {
    expect(matcher.match("file:///app/node_modules/tensorlab/link/na%C3%AFve/dispatch/basic.js")?.backend).toBe("naïve");
    expect(matcher.match("file:///app/node_modules/tensorlab/link/%E0%A4/dispatch/basic.js")).toBeUndefined();
  });

  it("answers undefined for everything else", () => {
    for (const url of [
      "file:///app/node_modules/tensorlab/index.js",
      "file:///app/node_modules/tensorlab/link/numba/dispatch/basic.jsx",
      "file:///app/node_modules/tensorlab/link/numba/dispatch/basic.js.map",
      "file:///app/node_modules/not-tensorlab/link/numba/dispatch/basic.js",
      "file:///app/node_modules/tensorlab/link/a/b/dispatch/basic.js",
      "node:fs",
      "file:///app/src/link/numba/dispatch/basic.js",
    ]) {
      expect(matcher.match(url)).toBeUndefined();
      expect(matcher.watches(url)).toBe(false);
    }
  });

  it("with no rules, matches nothing", () => {
    expect(new Matcher([]).match("file:///anything.js")).toBeUndefined();
    expect(new Matcher([{ ...named, packageName: undefined }]).match("file:///x/node_modules/backends/jax.js")).toBeUndefined();
  });
});
