/**
 * dispatch-hook/vite: a Vite plugin, for Vite apps in Node (SSR) and for Vitest in every pool, which
 * load the modules they inline where Node's hooks never see them. A watched dispatch module's own id
 * gets its facade in `transform`; the original loads under `<file>?dispatch-hook-original`,
 * transformed by the other plugins as usual. A module Vitest externalizes is left to Node's loader,
 * so none gets two facades. Only a plain import gets the facade: an id with a query (`?raw`, `?url`,
 * `?worker`, `?inline`, any other a plugin gives meaning to) is what it is without the plugin.
 */
import type { Plugin } from "vite";
import { path, url } from "../builtins.js";
import type { MarkerKind } from "../hooks/facade.js";
import { isPackageName, readJson } from "../hooks/package-scope.js";
import { pluginsKey } from "../host-adapters.js";
import { type AdapterOptions, createAdapterCore, type HostIds } from "./adapter-core.js";

export type { AdapterOptions } from "./adapter-core.js";

const original = "dispatch-hook-original";
/** The setup file that writes a Vitest worker's audit record (vitest-record.ts, built beside this file). */
const recordSetup = url.fileURLToPath(new URL("./vitest-record.js", import.meta.url));
const virtual = "\0dispatch-hook:";
/** Query parameters that leave an import plain: Vite's cache busting (`v`, and `t` after a hot update). */
const plainParams = new Set(["v", "t"]);

function plainQuery(query: string): boolean {
  for (const param of query.split("&")) if (param !== "" && !plainParams.has(param.split("=")[0] as string)) return false;
  return true;
}

const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function vlq(n: number): string {
  let value = n < 0 ? (-n << 1) | 1 : n << 1;
  let out = "";
  do {
    let digit = value & 31;
    value >>>= 5;
    if (value > 0) digit |= 32;
    out += digits[digit];
  } while (value > 0);
  return out;
}

const word = /\w/;

/**
 * The original's source map, of its code onto itself and naming its file: Vite names an
 * untransformed module's source after its id, and stack frames would show our query. As the chain's
 * first map, its `sources` are kept. A segment where a line starts and wherever a word starts or ends
 * (magic-string's `hires: "boundary"`, as Vite's own maps): a frame's line and column map back exactly.
 */
function identityMap(code: string, file: string) {
  let lastLine = 0;
  let lastColumn = 0;
  const lines = code.split("\n").map((line, l) => {
    const segments: string[] = [];
    let column = 0;
    for (let i = 0; i < line.length; i++) {
      if (i > 0 && word.test(line[i] as string) === word.test(line[i - 1] as string)) continue;
      // Generated column (from the line's last segment), source 0, source line and column (from the last segment anywhere).
      segments.push(`${vlq(i - column)}A${vlq(l - lastLine)}${vlq(i - lastColumn)}`);
      column = i;
      lastLine = l;
      lastColumn = i;
    }
    return segments.join(",");
  });
  return { version: 3 as const, sources: [file], sourcesContent: [code], names: [], mappings: lines.join(";") };
}

export interface VitePluginOptions extends AdapterOptions {
  /** Inline the packages that declare backends or registrations: under Vitest, and the ES ones under Vite's SSR (default true). */
  readonly inline?: boolean;
}

/** The packages in node_modules that declare backends or registration modules, by the module system of those modules. */
function declaringPackages(config: ReturnType<ReturnType<typeof createAdapterCore>["config"]>): { esm: string[]; commonjs: string[] } {
  const modules = new Map<string, { dir: string; files: string[] }>();
  const add = (name: string, dir: string, file: string) => {
    const entry = modules.get(name) ?? { dir, files: [] };
    entry.files.push(file);
    modules.set(name, entry);
  };
  for (const rule of config.rules)
    if (rule.packageName !== undefined && rule.roots[0] !== undefined)
      add(rule.packageName, url.fileURLToPath(rule.roots[0]), rule.subpath);
  for (const plugin of config.plugins)
    if (isPackageName(plugin.name))
      for (const file of Object.values(plugin.registrations)) add(plugin.name, path.dirname(plugin.declaredIn), file);
  const out = { esm: [] as string[], commonjs: [] as string[] };
  for (const [name, { dir, files }] of modules) {
    // The app's own package, and a linked one (a workspace), are in Vite's graph already.
    if (!dir.includes(`${path.sep}node_modules${path.sep}`)) continue;
    const json = readJson(path.join(dir, "package.json"));
    const typeModule = json.ok && (json.value as { type?: unknown }).type === "module";
    // By extension first, as Node reads it: a .cjs module Vite's SSR cannot run, a .mjs one it can.
    const commonjs = files.some((f) => f.endsWith(".cjs") || (!typeModule && !f.endsWith(".mjs")));
    (commonjs ? out.commonjs : out.esm).push(name);
  }
  return out;
}

export function dispatchHook(options: VitePluginOptions = {}): Plugin {
  let core: ReturnType<typeof createAdapterCore> | undefined;
  const { inline: _inline, ...adapter } = options;
  const use = (root?: string) => {
    core ??= createAdapterCore({ ...(root === undefined ? {} : { root }), ...adapter }, "dispatch-hook/vite");
    return core;
  };
  const ids = (file: string): HostIds => ({
    original: `${file}?${original}`,
    runtime: use().runtimePath,
    marker: (kind, index) => `${virtual}${kind}:${index ?? 0}:${file}`,
  });
  /**
   * Vite's SSR externalizes what is in node_modules: Node loads it, out of this plugin's sight, and a framework's
   * table there would miss every registration, the audit none the wiser. The ES packages that declare backends or
   * registration modules are kept in Vite's graph (ssr.noExternal); a CommonJS one, which Vite's SSR cannot run
   * itself, is named in a warning where Vite's SSR may run (a dev server, an SSR build): Node's loader serves it.
   */
  let external: string[] = [];
  const ssrConfig = (root: string | undefined) => {
    if (options.inline === false) return null;
    const { esm, commonjs } = declaringPackages(use(root).config());
    external = commonjs;
    return esm.length === 0 ? null : { ssr: { noExternal: esm } };
  };
  /** Once, where Vite's SSR may run: a dev server, or an SSR build (a client build never imports them). */
  const warnExternal = () => {
    if (external.length === 0) return;
    const [names, one] = [external.join(", "), external.length === 1];
    external = [];
    process.emitWarning(
      `dispatch-hook/vite: ${names} ${one ? "is a CommonJS package that declares" : "are CommonJS packages that declare"} dispatch modules or registration modules; Vite's SSR leaves ${one ? "it" : "them"} to Node, out of this plugin's sight. Run node with --import dispatch-hook/loader.mjs as well.`,
      { code: "DISPATCH_HOOK_VITE_EXTERNAL" },
    );
  };
  return {
    name: "dispatch-hook",
    // Under Vitest: the packages that declare backends or registration modules are inlined, so
    // their modules reach this plugin in every pool. Without it, a framework left in node_modules is
    // externalized, and in the vm pools Vitest runs externals itself, where neither this plugin nor
    // Node's loader sees them. Pass { inline: false } to leave them to Node's loader instead.
    //
    // Under Vitest, too, every test file's worker writes its audit record after the file, and gives
    // DISPATCH_HOOK_AUDIT's verdict (a setup file that does nothing unless DISPATCH_HOOK_AUDIT_DIR names
    // a run or DISPATCH_HOOK_AUDIT asks): Vitest stops its workers without running their exit handlers.
    config(config, env) {
      if ((config as { test?: unknown }).test === undefined && process.env.VITEST === undefined) {
        const ssr = ssrConfig(config.root);
        if (env?.isSsrBuild === true) warnExternal();
        return ssr;
      }
      const c = use(config.root);
      // The declared plugins, for each worker's audit (vitest-record.ts), whatever the worker's modules reach.
      const plugins = c
        .config()
        .plugins.map(({ name, declaredIn, registrations, expects }) => ({ name, declaredIn, registrations, expects }));
      const test: Record<string, unknown> = { setupFiles: [recordSetup], provide: { [pluginsKey]: plugins } };
      if (options.inline !== false) {
        const names = new Set<string>();
        for (const rule of c.config().rules) if (rule.packageName !== undefined) names.add(rule.packageName);
        for (const plugin of c.config().plugins) if (isPackageName(plugin.name)) names.add(plugin.name);
        if (names.size > 0) test.server = { deps: { inline: [...names] } };
      }
      return { test } as Record<string, unknown>;
    },
    configResolved(config) {
      use(config.root);
    },
    configureServer() {
      warnExternal();
    },
    resolveId(source) {
      return source.startsWith(virtual) ? source : null;
    },
    load(id) {
      if (!id.startsWith(virtual)) return null;
      const [kind, index, ...file] = id.slice(virtual.length).split(":");
      const path = file.join(":");
      return { code: use().marker(path, "module", kind as MarkerKind, Number(index), ids(path)), map: { mappings: "" } };
    },
    transform(code, id) {
      if (id.startsWith("\0")) return null;
      const cut = id.indexOf("?");
      const file = cut < 0 ? id : id.slice(0, cut);
      const query = cut < 0 ? "" : id.slice(cut + 1);
      if (query === original) return use().plan(file) === undefined ? null : { code, map: identityMap(code, file) };
      if (!plainQuery(query) || use().plan(file) === undefined) return null;
      // The facade is a new module with no lines of the original in it: an empty map, and the
      // original keeps its own code and maps under its other id.
      return { code: use().facade(file, code, "module", ids(file)), map: { mappings: "" } };
    },
  };
}

export default dispatchHook;
