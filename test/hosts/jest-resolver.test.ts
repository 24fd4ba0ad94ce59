import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cacheDirectory, createResolver, type JestResolverOptions } from "../../src/adapters/jest.js";
import { frameworkTree } from "./trees.js";

function resolverFor(root: string) {
  const resolve = createResolver({ root });
  const jest = (conditions: string[], basedir = root): JestResolverOptions => ({
    basedir,
    conditions,
    rootDir: root,
    defaultResolver: (request) => (request.startsWith("/") ? request : join(basedir, request)),
  });
  return { resolve, jest };
}

describe("dispatch-hook/jest", () => {
  it("sends a require() of a watched dispatch module to its CommonJS facade, in the cache directory", () => {
    const { root, table, registration } = frameworkTree();
    const { resolve, jest } = resolverFor(root);
    const facade = resolve(table, jest(["require", "default"]));
    expect(facade.startsWith(cacheDirectory())).toBe(true);
    expect(facade.endsWith("facade.cjs")).toBe(true);
    const code = readFileSync(facade, "utf8");
    expect(code).toContain(JSON.stringify(table));
    expect(code).toContain(JSON.stringify(registration));
    // Resolving again gives the same file, unchanged.
    expect(resolve(table, jest(["require", "default"]))).toBe(facade);
  });

  it("sends an import of it (Jest's ESM mode) to an ES facade with its step markers", () => {
    const { root, table } = frameworkTree();
    const { resolve, jest } = resolverFor(root);
    const facade = resolve(table, jest(["import", "default"]));
    expect(facade.endsWith("facade.mjs")).toBe(true);
    const code = readFileSync(facade, "utf8");
    expect(code).toContain(`export * from ${JSON.stringify(table)}`);
    const step = readFileSync(join(facade, "../step0.mjs"), "utf8");
    expect(step).toContain("step(");
    expect(step).toContain('"name":"dispatch-hook/jest"');
    expect(readFileSync(join(facade, "../done0.mjs"), "utf8")).toContain("finish(");
  });

  it("resolves everything else, and the facade's own import of the original, as Jest would", () => {
    const { root, table } = frameworkTree();
    const { resolve, jest } = resolverFor(root);
    const other = join(root, "node_modules/tensorkit/other.js");
    expect(resolve(other, jest(["require"]))).toBe(other);
    expect(resolve(table, jest(["import"], join(cacheDirectory(), "abc")))).toBe(table);
    expect(resolve("node:fs", { ...jest(["require"]), defaultResolver: () => "fs" })).toBe("fs");
  });
});
