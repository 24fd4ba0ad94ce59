import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cacheDirFor, cacheName, chooseCacheDir, packageDirOf, runCached } from "../../src/hooks/code-cache.js";
import { makeTree } from "../integration/fixture.js";

/** A script whose completion value is a function returning `answer`. */
const script = (answer: string) => `(function () { return ${JSON.stringify(answer)}; })\n`;
const call = (value: unknown) => (value as () => string)();

const built = fileURLToPath(new URL("../../dist/hooks/code-cache.js", import.meta.url));
/**
 * runCached in a fresh process, then save(): V8 keeps an in-memory cache of what an isolate compiled,
 * so whether a cache file is used or rejected shows only in a process that has not compiled the source.
 */
function fresh(file: string, dir: string): { state: string; answer: string; file: string } {
  const code = [
    `import { runCached } from ${JSON.stringify(built)};`,
    `const run = runCached(${JSON.stringify(file)}, ${JSON.stringify(dir)});`,
    "run.save();",
    "console.log(JSON.stringify({ state: run.state, answer: run.value(), file: run.file }));",
  ].join("\n");
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" }));
}

describe("where the code cache lives", () => {
  it("in the outermost node_modules that holds the package, else in the package's own", () => {
    const app = join(sep, "srv", "app");
    expect(cacheDirFor(join(app, "node_modules", "dispatch-hook"))).toBe(join(app, "node_modules", ".cache", "dispatch-hook"));
    expect(cacheDirFor(join(app, "node_modules", "kit", "node_modules", "dispatch-hook"))).toBe(
      join(app, "node_modules", ".cache", "dispatch-hook"),
    );
    expect(cacheDirFor(join(app, "node_modules", ".pnpm", "dispatch-hook@0.1.0", "node_modules", "dispatch-hook"))).toBe(
      join(app, "node_modules", ".cache", "dispatch-hook"),
    );
    // A linked checkout: no node_modules above it.
    expect(cacheDirFor(join(sep, "src", "dispatch-hook"))).toBe(
      join(sep, "src", "dispatch-hook", "node_modules", ".cache", "dispatch-hook"),
    );
  });

  it("DISPATCH_HOOK_CODE_CACHE turns it off or names the directory", () => {
    const pkg = join(sep, "srv", "app", "node_modules", "dispatch-hook");
    for (const off of ["0", "false", "off", "no", "OFF"]) expect(chooseCacheDir(off, pkg)).toBeUndefined();
    for (const on of [undefined, "", "1", "true", "on", "yes", "True"]) expect(chooseCacheDir(on, pkg)).toBe(cacheDirFor(pkg));
    expect(chooseCacheDir("some/dir", pkg)).toBe(resolve("some/dir"));
  });

  it("the package of a bundled module is two directories up", () => {
    expect(packageDirOf("file:///srv/app/node_modules/dispatch-hook/dist/bundle/boot.js")).toBe(
      resolve("/srv/app/node_modules/dispatch-hook"),
    );
  });

  it("a file name in three parts: which file, which contents of it, which kind of process", () => {
    const stat = { size: 10, mtimeMs: 1000.5, ino: 7 };
    const name = cacheName("/srv/x/install.script.js", stat);
    expect(name).toMatch(/^install\.script-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}\.v8cache$/);
    expect(cacheName("/srv/x/install.script.js", { ...stat })).toBe(name);
    const [, file, contents, kind] = name.match(/-([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{8})\.v8cache$/) as RegExpMatchArray;
    for (const other of [
      { ...stat, size: 11 },
      { ...stat, mtimeMs: 1000.6 },
      { ...stat, ino: 8 },
    ]) {
      const changed = cacheName("/srv/x/install.script.js", other);
      expect(changed).not.toBe(name);
      expect(changed).toContain(`-${file}-`);
      expect(changed).not.toContain(`-${contents}-`);
      expect(changed.endsWith(`-${kind}.v8cache`)).toBe(true);
    }
    expect(cacheName("/srv/y/install.script.js", stat)).not.toContain(`-${file}-`);
  });
});

describe("runCached", () => {
  function fixture(source = script("one")) {
    const root = makeTree({ "code.js": source });
    return { file: join(root, "code.js"), dir: join(root, "cache") };
  }

  it("without a cache: runs the script and writes the cache on save(), once", () => {
    const { file, dir } = fixture();
    const first = runCached(file, dir);
    expect(first.state).toBe("missing");
    expect(call(first.value)).toBe("one");
    expect(first.file?.startsWith(dir)).toBe(true);
    expect(existsSync(dir)).toBe(false);
    first.save();
    expect(readdirSync(dir)).toEqual([first.file?.slice(dir.length + 1)]);
    expect(readFileSync(first.file as string).length).toBeGreaterThan(0);
    writeFileSync(first.file as string, "");
    first.save();
    expect(readFileSync(first.file as string).length).toBe(0);
  });

  it("the next process uses the cache and never writes it again", () => {
    const { file, dir } = fixture();
    const first = fresh(file, dir);
    expect(first).toMatchObject({ state: "missing", answer: "one" });
    const written = readFileSync(first.file);
    expect(fresh(file, dir)).toEqual({ ...first, state: "used" });
    expect(readFileSync(first.file).equals(written)).toBe(true);
  });

  it("a cache V8 rejects (damaged) costs only the time: the script runs, and save() replaces it", () => {
    const { file, dir } = fixture();
    const { file: target } = fresh(file, dir);
    writeFileSync(target, "not a code cache at all");
    expect(fresh(file, dir)).toMatchObject({ state: "rejected", answer: "one" });
    expect(readFileSync(target, "utf8")).not.toBe("not a code cache at all");
    expect(fresh(file, dir)).toMatchObject({ state: "used", answer: "one" });
  });

  it("an edited script of the same length never runs the old code from the cache", () => {
    // V8 checks only the source's length; the file name carries the rest.
    const { file, dir } = fixture(script("one"));
    fresh(file, dir);
    expect(fresh(file, dir)).toMatchObject({ state: "used", answer: "one" });
    const before = statSync(file);
    writeFileSync(file, script("two"));
    utimesSync(file, before.atime, new Date(before.mtimeMs + 5000));
    expect(fresh(file, dir)).toMatchObject({ state: "missing", answer: "two" });
  });

  it("a directory that cannot be written: the script runs, save() does not throw, nothing is written", () => {
    const root = makeTree({ "code.js": script("one"), blocker: "a file where the cache directory would be" });
    const dir = join(root, "blocker", "cache");
    const run = runCached(join(root, "code.js"), dir);
    expect(run.state).toBe("missing");
    expect(call(run.value)).toBe("one");
    run.save();
    expect(readdirSync(root).sort()).toEqual(["blocker", "code.js"]);
  });

  it("a new cache replaces those of the script's old contents, and keeps other processes' and other copies'", () => {
    const { file, dir } = fixture();
    const old = runCached(file, dir);
    old.save();
    const [base, copy, contents, kind] = (
      basename(old.file as string).match(/^(.*)-([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{8})\.v8cache$/) ?? []
    ).slice(1);
    const otherKindOld = `${base}-${copy}-${contents}-00000000.v8cache`;
    const otherCopy = `${base}-00000000-${contents}-${kind}.v8cache`;
    for (const name of [otherKindOld, otherCopy]) writeFileSync(join(dir, name), "x");
    const before = statSync(file);
    writeFileSync(file, script("two"));
    utimesSync(file, before.atime, new Date(before.mtimeMs + 5000));
    const updated = runCached(file, dir);
    expect(updated.state).toBe("missing");
    updated.save();
    const current = basename(updated.file as string);
    expect(readdirSync(dir).sort()).toEqual([current, otherCopy].sort());
    // Another kind of process with the current contents keeps its cache when this one writes again.
    const otherKindNow = current.replace(/-[0-9a-f]{8}\.v8cache$/, "-00000000.v8cache");
    writeFileSync(join(dir, otherKindNow), "x");
    rmSync(updated.file as string);
    runCached(file, dir).save();
    expect(readdirSync(dir).sort()).toEqual([current, otherCopy, otherKindNow].sort());
  });

  it("turned off: no file is read or written", () => {
    const { file } = fixture();
    const off = runCached(file, undefined);
    expect(off).toMatchObject({ state: "off", file: undefined });
    expect(call(off.value)).toBe("one");
    off.save();
  });

  it("a script that does not compile throws its SyntaxError, as an import would", () => {
    const { file, dir } = fixture("(function () {");
    expect(() => runCached(file, dir)).toThrow(SyntaxError);
  });
});
