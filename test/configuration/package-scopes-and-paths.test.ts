import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  dependencyNames,
  findPackage,
  findPackageRoot,
  isPackageName,
  isRecord,
  packagePath,
  readJson,
  realDir,
} from "../../src/hooks/package-scope.js";
import { makeTree } from "../integration/fixture.js";

describe("package scopes", () => {
  it("finds the nearest package.json upwards, and none above the root", () => {
    const root = makeTree({ "package.json": "{}", "a/b/.keep": "" });
    expect(findPackageRoot(join(root, "a/b"))).toBe(root);
    expect(findPackageRoot("/")).toBeUndefined();
  });

  it("finds a dependency the way Node does: node_modules from the package upwards", () => {
    const root = makeTree({
      "node_modules/dep/package.json": "{}",
      "node_modules/kit/node_modules/dep/package.json": "{}",
      "node_modules/kit/package.json": "{}",
    });
    expect(findPackage(join(root, "node_modules/kit"), "dep")).toEqual({
      dir: join(root, "node_modules/kit/node_modules/dep"),
      json: { ok: true, value: {} },
    });
    expect(findPackage(root, "dep")?.dir).toBe(join(root, "node_modules/dep"));
    expect(findPackage(root, "absent")).toBeUndefined();
  });

  it("lists run-time dependencies, and development ones only for the app", () => {
    const json = { dependencies: { a: "1" }, peerDependencies: { b: "1" }, optionalDependencies: { a: "1" }, devDependencies: { c: "1" } };
    expect(dependencyNames(json, false)).toEqual(["a", "b"]);
    expect(dependencyNames(json, true)).toEqual(["a", "b", "c"]);
    expect(dependencyNames({ dependencies: ["odd"] }, false)).toEqual([]);
  });

  it("reads JSON or says why not, and keeps a path it cannot resolve", () => {
    const root = makeTree({ "ok.json": '{"a":1}', "bad.json": "{" });
    expect(readJson(join(root, "ok.json"))).toEqual({ ok: true, value: { a: 1 } });
    const bad = readJson(join(root, "bad.json"));
    expect(bad.ok).toBe(false);
    // Why: the parser's own words, and for a missing file the system's.
    expect(!bad.ok && bad.error).toMatch(/JSON/);
    const missing = readJson(join(root, "missing.json"));
    expect(!missing.ok && missing.error).toContain("ENOENT");
    expect(realDir(join(root, "missing"))).toBe(join(root, "missing"));
  });
});

describe("package paths", () => {
  it("normalise paths inside the package and refuse the rest with a reason", () => {
    expect(packagePath("./dispatch/numba.js")).toEqual({ ok: true, path: "dispatch/numba.js" });
    expect(packagePath("a/../b.js")).toEqual({ ok: true, path: "b.js" });
    expect(packagePath("../x.js")).toEqual({ ok: false, reason: "leaves the package; it must point inside it" });
    expect(packagePath("/etc/passwd")).toMatchObject({ ok: false, reason: expect.stringContaining("is absolute") });
    expect(packagePath("C:\\\\x.js")).toMatchObject({ ok: false });
    expect(packagePath("file:///x.js")).toMatchObject({ ok: false });
    expect(packagePath("a\0b")).toEqual({ ok: false, reason: "contains a NUL character" });
    expect(packagePath("")).toEqual({ ok: false, reason: "is empty" });
  });

  it("tell package names and plain objects", () => {
    expect([isPackageName("ml-ops"), isPackageName("@scope/pkg"), isPackageName("../x"), isPackageName("a b")]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([isRecord({}), isRecord([]), isRecord(null), isRecord("x")]).toEqual([true, false, false, false]);
  });
});
