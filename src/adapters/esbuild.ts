/**
 * dispatch-hook/esbuild: an esbuild plugin, so that a bundle carries its dispatch modules' facades
 * and runs under plain node. A watched dispatch module's path gets the facade; the original loads
 * under the same path with the suffix `?dispatch-hook-original` (a suffix keeps it a file, so source
 * maps name it); markers are virtual modules of their own namespace. With code splitting, a backend
 * loaded with import() brings its facade into its chunk. Only a plain import of code gets the
 * facade: not an import with attributes, a file the build loads as something else, or a suffixed path.
 */
import type { Plugin } from "esbuild";
import { path } from "../builtins.js";
import type { MarkerKind } from "../hooks/facade.js";
import { builtByDefine } from "../host-adapters.js";
import { type AdapterOptions, createAdapterCore, type HostIds } from "./adapter-core.js";

export type { AdapterOptions } from "./adapter-core.js";

const suffix = "?dispatch-hook-original";
const namespace = "dispatch-hook";
/** How a facade imports a registration module: resolved as having side effects, whatever its package.json says. */
const registration = "dispatch-hook-registration:";
const codeLoaders = new Set(["js", "jsx", "ts", "tsx", "default"]);
/** The build's options that decide how a module graph resolves and loads. */
const resolving = [
  "absWorkingDir",
  "alias",
  "conditions",
  "external",
  "loader",
  "mainFields",
  "nodePaths",
  "packages",
  "resolveExtensions",
  "tsconfig",
];

export function dispatchHook(options: AdapterOptions = {}): Plugin {
  return {
    name: "dispatch-hook",
    setup(build) {
      const core = createAdapterCore({ root: build.initialOptions.absWorkingDir ?? process.cwd(), ...options }, "dispatch-hook/esbuild");
      // The bundle tells the audit that a host adapter built it (host-adapters.ts), before any of its modules load.
      build.initialOptions.define = { ...build.initialOptions.define, [builtByDefine]: JSON.stringify("dispatch-hook/esbuild") };
      // The audit finds expected op types by their classes' names, which minifying would change.
      build.initialOptions.keepNames ??= true;
      // With splitting, a registration module the app imports too goes to a shared chunk, which
      // esbuild evaluates before the chunk of the facade that imports it: outside its window, before
      // the table. Required from its done marker, it is a lazy module that runs where the marker runs.
      // Those esbuild would not wait for are imported, as without splitting (HostIds.graph, in
      // adapter-core.ts). What a module's graph holds, and whether it awaits, esbuild tells: it
      // refuses to bundle a graph that awaits as CommonJS. Any other failure of that build keeps
      // the import too.
      const graphs = new Map<string, { awaits: boolean; files: Set<string> }>();
      build.onStart(() => graphs.clear());
      const graph = (file: string) => {
        let known = graphs.get(file);
        if (known === undefined) {
          const given = build.initialOptions as Record<string, unknown>;
          const same = Object.fromEntries(resolving.flatMap((k) => (given[k] === undefined ? [] : [[k, given[k]]])));
          const platform = build.initialOptions.platform ?? "node";
          try {
            const cwd = build.initialOptions.absWorkingDir ?? process.cwd();
            const built = build.esbuild.buildSync({
              ...same,
              entryPoints: [file],
              bundle: true,
              write: false,
              format: "cjs",
              platform,
              metafile: true,
              logLevel: "silent",
            });
            known = { awaits: false, files: new Set(Object.keys(built.metafile?.inputs ?? {}).map((f) => path.resolve(cwd, f))) };
          } catch {
            known = { awaits: true, files: new Set() };
          }
          graphs.set(file, known);
        }
        return known;
      };
      const split = build.initialOptions.splitting === true;
      const ids = (file: string): HostIds => ({
        original: `${file}${suffix}`,
        runtime: core.runtimePath,
        marker: (kind, index) => `${namespace}:${kind}:${index ?? 0}:${file}`,
        registration: (module) => `${registration}${module}`,
        ...(split ? { graph } : {}),
      });
      build.onResolve({ filter: /^dispatch-hook:/ }, (args) => ({ path: args.path.slice(namespace.length + 1), namespace }));
      // A plugin package marked "sideEffects": false would have its registration module dropped: it exports nothing the facade uses.
      build.onResolve({ filter: /^dispatch-hook-registration:/ }, (args) => ({
        path: args.path.slice(registration.length),
        sideEffects: true,
      }));
      build.onResolve({ filter: /\?dispatch-hook-original$/ }, (args) => ({ path: args.path.slice(0, -suffix.length), suffix }));
      build.onLoad({ filter: /.*/, namespace }, (args) => {
        const [kind, index, ...file] = args.path.split(":");
        const target = file.join(":");
        const contents = core.marker(target, core.formatOf(target), kind as MarkerKind, Number(index), ids(target));
        return { contents, loader: "js", resolveDir: path.dirname(target) };
      });
      const loaders = build.initialOptions.loader ?? {};
      build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async (args) => {
        if (args.namespace !== "file" || args.suffix !== "" || Object.keys(args.with).length > 0) return undefined;
        const loader = loaders[path.extname(args.path)];
        if ((loader !== undefined && !codeLoaders.has(loader)) || core.plan(args.path) === undefined) return undefined;
        const { readFile } = await import("node:fs/promises");
        const code = await readFile(args.path, "utf8");
        const contents = core.facade(args.path, code, core.formatOf(args.path), ids(args.path));
        return { contents, loader: "js", resolveDir: path.dirname(args.path) };
      });
    },
  };
}

export default dispatchHook;
