/**
 * dispatch-hook/jest: a Jest resolver (`resolver: "dispatch-hook/jest"`). Jest runs modules in its own
 * registry, where Node's hooks never see them, and a transformer cannot send a file's importers
 * elsewhere. The resolver can: an importer of a watched dispatch module gets its facade, written once
 * to a cache directory, as an ES module for `import` and as CommonJS for `require()`. The facade
 * imports the original by its path, so its code, line numbers and coverage are untouched.
 */
import { crypto, fs, os, path } from "../builtins.js";
import { hostAdapters } from "../host-adapters.js";
import { makeDirectory, writeFileAtomically } from "../registry/run-records.js";
import { type AdapterOptions, createAdapterCore, type HostIds } from "./adapter-core.js";

export type { AdapterOptions } from "./adapter-core.js";

/** What Jest passes a custom resolver. */
export interface JestResolverOptions {
  readonly basedir: string;
  readonly conditions?: readonly string[];
  readonly rootDir?: string;
  readonly defaultResolver: (request: string, options: JestResolverOptions) => string;
}

/** Where generated facades live: one directory per dispatch module file and plan. */
export function cacheDirectory(): string {
  return path.join(os().tmpdir(), `dispatch-hook-jest-${typeof process.getuid === "function" ? process.getuid() : "user"}`);
}

function write(file: string, text: string): void {
  // Left alone when unchanged; parallel Jest workers never read half a file.
  if (fs.existsSync(file) && fs.readFileSync(file, "utf8") === text) return;
  writeFileAtomically(file, text);
}

/** A resolver with its own configuration (the default export reads package.json declarations from Jest's rootDir). */
export function createResolver(options: AdapterOptions = {}): (request: string, jest: JestResolverOptions) => string {
  let core: ReturnType<typeof createAdapterCore> | undefined;
  let marked = false;
  const cache = cacheDirectory();
  return (request, jest) => {
    // The worker that asks runs the tests: its audit knows a host serves it before any facade loads.
    if (!marked) marked = hostAdapters().add("dispatch-hook/jest").size > 0;
    const resolved = jest.defaultResolver(request, jest);
    // The facade and its markers import the original.
    if (jest.basedir.startsWith(cache) || !path.isAbsolute(resolved)) return resolved;
    core ??= createAdapterCore({ ...(jest.rootDir === undefined ? {} : { root: jest.rootDir }), ...options }, "dispatch-hook/jest");
    const plan = core.plan(resolved);
    if (plan === undefined) return resolved;
    const esm = jest.conditions?.includes("import") === true && !jest.conditions.includes("require");
    const format = core.formatOf(resolved);
    const key = crypto()
      .createHash("sha256")
      .update(`${resolved}\0${JSON.stringify(plan)}\0${format}`)
      .digest("hex")
      .slice(0, 16);
    const dir = path.join(cache, key);
    makeDirectory(dir);
    if (!esm) {
      const file = path.join(dir, "facade.cjs");
      write(file, core.cjsFacade(resolved, core.runtimePath.replace(/\.js$/, ".cjs")));
      return file;
    }
    const ids: HostIds = {
      original: resolved,
      runtime: core.runtimePath,
      marker: (kind, index) => path.join(dir, `${kind}${index ?? 0}.mjs`),
    };
    // A step, an early and a done marker per registration module, and a step and an early marker after the last.
    for (let i = 0; i <= plan.registrations.length; i++) {
      write(path.join(dir, `step${i}.mjs`), core.marker(resolved, format, "step", i, ids));
      write(path.join(dir, `early${i}.mjs`), core.marker(resolved, format, "early", i, ids));
      if (i < plan.registrations.length) write(path.join(dir, `done${i}.mjs`), core.marker(resolved, format, "done", i, ids));
    }
    const file = path.join(dir, "facade.mjs");
    write(file, core.facade(resolved, fs.readFileSync(resolved, "utf8"), format, ids));
    return file;
  };
}

export default createResolver();
