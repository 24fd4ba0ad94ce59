// Builds src/ into dist/: one ES module per source file (so tests and coverage map 1:1 back to
// src/ through the source maps), then declarations from tsc.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = join(root, "src");

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

rmSync(join(root, "dist"), { recursive: true, force: true });
const entryPoints = sources(src);
await build({
  entryPoints,
  outdir: join(root, "dist"),
  outbase: src,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  bundle: false,
  logLevel: "warning",
});
// The shipped entry points, each bundled into one file: every module a process loads at start-up
// costs time, and the loader runs at the start of every process (shared chunks cost more than the
// code they save: measured, each extra file costs more than parsing a few kilobytes twice). The
// loader loads install.js and the main entry (which arms the exit audit when the environment asks). The per-file build
// above is what unit tests import; the integration tests run these bundles through the package's
// exports map.
const bundle = {
  outdir: join(root, "dist/bundle"),
  platform: "node",
  target: "node20",
  sourcemap: true,
  bundle: true,
  logLevel: "warning",
};
await build({
  ...bundle,
  entryPoints: {
    index: join(src, "index.ts"),
    hooks: join(src, "hooks/index.ts"),
    cli: join(src, "cli/bin.ts"),
    "doctor-probe": join(src, "cli/doctor-probe.ts"),
    vite: join(src, "adapters/vite.ts"),
    vitest: join(src, "adapters/vitest.ts"),
    "vitest-setup": join(src, "adapters/vitest-setup.ts"),
    "vitest-record": join(src, "adapters/vitest-record.ts"),
    "vitest-reporter": join(src, "adapters/vitest-reporter.ts"),
    esbuild: join(src, "adapters/esbuild.ts"),
  },
  format: "esm",
  // The hosts' own packages are the user's: never bundled. The adapters reach the registry through
  // the main entry's bundle, so that a test and its helpers share one Registry class.
  external: ["vite", "vitest", "esbuild"],
  plugins: [
    {
      name: "main-entry-external",
      setup(b) {
        b.onResolve({ filter: /^\.\.\/index\.js$/ }, (args) =>
          args.importer.includes("/adapters/") ? { path: "./index.js", external: true } : undefined,
        );
      },
    },
  ],
});
// The Jest resolver, as CommonJS: Jest require()s its resolver. import.meta.url is the bundle's own URL.
await build({
  ...bundle,
  entryPoints: { jest: join(src, "adapters/jest.ts"), "jest-reporter": join(src, "adapters/jest-reporter.ts") },
  format: "cjs",
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__dispatchHookUrl" },
  banner: { js: 'const __dispatchHookUrl = require("node:url").pathToFileURL(__filename).href;' },
  footer: { js: "module.exports = Object.assign(module.exports.default, module.exports);" },
});
// The runtime and the main entry again as CommonJS. The runtime is for CommonJS facades; it keeps no
// state, so its two copies never disagree. The main entry is what require("dispatch-hook") loads,
// everywhere (no "module-sync": Vitest's vm pools ran the ES bundle it named as CommonJS); where a
// program also imports the ES one, the second copy works with the first through the hub, as two
// installed copies do.
await build({
  ...bundle,
  entryPoints: { index: join(src, "index.ts") },
  format: "cjs",
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__dispatchHookUrl" },
  banner: { js: 'const __dispatchHookUrl = require("node:url").pathToFileURL(__filename).href;' },
});
// What only the loader loads, minified: V8 scans every byte of a module it loads, and these load at
// the start of every process under the loader, beside an app that may never import dispatch-hook
// (bench/RESULTS.md §10). The hooks (in-thread, or on their own thread) lose their names too: no
// user calls them, and the source maps beside them give names and lines back (node
// --enable-source-maps). The runtime that generated code imports keeps its names, since bundlers
// copy it into users' bundles (the Vite and esbuild adapters), where they read it.
await build({
  ...bundle,
  minify: true,
  // Short lines: Node prints the source line of an uncaught error, and one line of a whole bundle
  // would fill the terminal.
  lineLimit: 100,
  entryPoints: { install: join(src, "hooks/loader-entry.ts"), "hooks-thread": join(src, "hooks/hooks-thread.ts") },
  format: "esm",
});
const runtimeBundle = { ...bundle, minifyWhitespace: true, minifySyntax: true, lineLimit: 100 };
await build({ ...runtimeBundle, entryPoints: { runtime: join(src, "runtime/index.ts") }, format: "esm" });
await build({
  ...runtimeBundle,
  entryPoints: { runtime: join(src, "runtime/index.ts") },
  format: "cjs",
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__dispatchHookUrl" },
  banner: { js: 'const __dispatchHookUrl = require("node:url").pathToFileURL(__filename).href;' },
});
// Every shipped bundle stays ASCII (esbuild escapes strings; a comment it keeps, on a class field,
// may not be): V8 holds a source with one other character as two bytes a character, and the loader's
// bundles are read at the start of every process (measured: 2.5 M instructions more for install).
for (const name of readdirSync(join(root, "dist/bundle"))) {
  if (!/\.c?js$/.test(name)) continue;
  const lines = readFileSync(join(root, "dist/bundle", name), "utf8").split("\n");
  const at = lines.findIndex((line) => /[\u0080-\uffff]/.test(line));
  if (at >= 0) throw new Error(`dist/bundle/${name}:${at + 1} is not ASCII (keep comments that reach bundles ASCII):\n${lines[at]}`);
}
if (!process.argv.includes("--no-types")) {
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json")], {
    stdio: "inherit",
  });
  pruneDeclarations();
}

/**
 * Keeps only the declarations the exports map's "types" reach, following their imports: the
 * package ships the public surface (internals are stripped with @internal), not a .d.ts for every
 * module of the command line or the hooks.
 */
function pruneDeclarations() {
  const types = join(root, "dist/types");
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const queue = Object.values(pkg.exports).flatMap((target) =>
    typeof target === "object" && target.types ? [join(root, target.types)] : [],
  );
  const keep = new Set();
  while (queue.length > 0) {
    const file = queue.pop();
    if (keep.has(file) || !existsSync(file)) continue;
    keep.add(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/(?:from |import\()"(\.[^"]+)"/g)) {
      queue.push(join(dirname(file), spec.replace(/\.js$/, ".d.ts")));
    }
  }
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      } else if (!keep.has(path)) rmSync(path);
    }
  };
  walk(types);
}
console.log(`built ${entryPoints.length} modules from ${relative(root, src)}/ into dist/`);
