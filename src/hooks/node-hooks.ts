/**
 * Node's module hooks, one implementation for `module.registerHooks` (in-thread, synchronous) and
 * `module.register` (off-thread, asynchronous; hooks-thread.ts), built per installation.
 * - resolve learns the package scope of every module (discovery) and leaves every URL as Node
 *   resolved it, so importers, `import.meta.resolve()` and `require.resolve()` of a watched module get
 *   its own URL (a registration module importing its own dispatch module gets the original's, see
 *   learn); it short-circuits the URLs generated code imports (virtual-modules.ts).
 * - load serves a watched module's URL: a facade (facade.ts) for an ES module with registration
 *   modules and for a CommonJS one `import` reaches; the module with an epilogue (instrument.ts) for a
 *   CommonJS one require() loads, and for an ES one with none. Every other module passes untouched.
 * A hook never throws because of dispatch-hook: a failure is reported, and the module loads as without us.
 */
import { fs, url } from "../builtins.js";
import type { ModuleInfo } from "../channel.js";
import type { HookConfig } from "./discovery.js";
import { hasDefaultExport, hasModuleSyntax, wrapsOwnFile } from "./export-names.js";
import { facadeSource, markerSource } from "./facade.js";
import { enterOnStart, esmEpilogue, instrument } from "./instrument.js";
import { Matcher, type ModulePlan } from "./matcher.js";
import {
  type Context,
  type FacadeSetting,
  facadeInput,
  type HookOptions,
  hasKeys,
  info,
  isCommonJs,
  isEsm,
  isJavaScript,
  type LoadResult,
  type Maybe,
  type NextLoad,
  type NextResolve,
  originalResult,
  type ResolveResult,
  requireCacheEntry,
  resolvedFormatsOf,
  resolving,
  said,
  text,
  then,
  unloadableRegistration,
} from "./module-facts.js";
import { fileOf, originalUrl, parseOriginal, parseVirtual, TAG, type VirtualModule } from "./virtual-modules.js";

/** A TypeScript file that may be CommonJS (a .ts one in a package without "type": "module"), with no query. */
const typeScriptCjs = /^[^?#]*\.c?ts$/;

/** The hook pair of one installation. */
export function createHooks(options: HookOptions) {
  const { discovery, mode, runtime, report } = options;
  const watchList = options.watchList ?? ((config: HookConfig) => new Matcher(config.rules, config.plugins));
  let matcher = watchList(discovery.config());
  let version = discovery.version;
  let on = true;
  const stillWanted = options.enabled;
  const enabled = stillWanted === undefined ? () => on : () => on && stillWanted();
  // registerHooks calls the hooks, and its next steps answer, synchronously; only module.register's thread gets promises.
  const async = mode === "register";
  const needLoad = options.needLoad ?? (() => {});
  const idle = options.idle ?? (() => {});
  // URLs load() served (a watched module's, an original's, a marker's), and those handed out that it has not yet. An import
  // of a served URL finds Node's module map, a require() require.cache while it holds it: load() is not called again.
  const served = new Set<string>();
  const servedCommonjs = new Set<string>();
  /** Modules served as a facade (which imports the registration modules), by file: any instance (`?v=1`) counts. */
  const facades = new Set<string>();
  const awaited = new Set<string>();
  const hookedRequires = new Set<string>();
  let settled = false;
  /** Modules being built: a resolve() meanwhile (es-module-lexer's require, say) must not detach load(). */
  let generating = 0;
  const awaitLoad = (href: string, context: Context): string => {
    // A CommonJS module out of require.cache (deleted, or its require() threw) is loaded again, imported too.
    const cjs = context.conditions?.includes("require") === true || servedCommonjs.has(href);
    if (!served.has(href) || (cjs && requireCacheEntry(href) === undefined) || hasKeys(context.importAttributes)) {
      awaited.add(href);
      needLoad();
    }
    return href;
  };
  const loading = (href: string) => {
    served.add(href);
    awaited.delete(href);
    // Detached by a later resolve(), not here, nor while this builds the module.
    if (awaited.size === 0) settled = true;
  };
  const sync = () => {
    if (discovery.version === version) return;
    version = discovery.version;
    const config = discovery.config();
    matcher = watchList(config);
    report({ type: "config", config });
  };

  // Off-thread (Node 20), a CommonJS registration module is required by its done marker.
  const required = (href: string) => async && isCommonJs(discovery.formatOf?.(href));
  const setting: FacadeSetting = { awaitLoad, runtime: runtime.esm, required, seeRequire: mode === "registerHooks" };
  const input = (module: ModuleInfo, plan: ModulePlan, hasDefault: boolean) => facadeInput(module, plan, hasDefault, setting);
  const facadeServed = (url: string, plan: ModulePlan) =>
    report({ type: "facade", url, backend: plan.backend, plugins: plan.registrations.map((r) => r.plugin) });

  const marker = (v: VirtualModule): LoadResult => {
    const plan = matcher.match(v.original) ?? { backend: "?", exportName: "?", registrations: [] };
    const module = info(v.original, plan, v.commonjs ? "commonjs" : "module");
    return { format: "module", shortCircuit: true, source: markerSource(v.kind, v.index, input(module, plan, false)) };
  };

  /** What a watched module's own URL serves, given what the next hook loaded there. */
  const serve = (href: string, plan: ModulePlan, context: Context, result: LoadResult): LoadResult => {
    let format = result.format ?? discovery.formatOf?.(href);
    // Node's own load knows a TypeScript module's format where require()'s resolve gave none: its original gets it too.
    if (format?.endsWith("-typescript") === true && resolvedFormats.get(href) == null) resolvedFormats.set(href, format);
    // require() of a .js file in a package with no "type": Node gives no format and reads its syntax
    // (Node 22+, where these hooks see require()); so must the facade, or an ES module runs as CommonJS.
    if (result.format == null && format === "commonjs" && mode === "registerHooks" && hasModuleSyntax(text(result.source ?? ""))) {
      format = "module";
    }
    if (!isJavaScript(format)) return result;
    if (!isEsm(format)) servedCommonjs.add(href);
    else {
      if (result.source == null) return result;
      const source = text(result.source);
      // Another loader's wrapper of the module (import-in-the-middle's ?iitm=true): served as it
      // is, so that it runs; the import of the module it wraps gets the facade or the signal.
      if (href.includes("?") && wrapsOwnFile(source, href)) return result;
      // No registration module, or every one has finished for an earlier instance (a new one would
      // not run again, and its windows would hold nothing): the module itself, the signal appended.
      if (plan.registrations.every((r) => options.ran?.(r.url) === true)) {
        facadeServed(href, plan);
        return { ...result, source: esmEpilogue(source, info(href, plan, "module"), runtime.esm) };
      }
      const lexed = hasDefaultExport(source);
      if (!lexed.exact) {
        const message = "its export names could not be read exactly; the facade guessed whether it has a default export";
        report({ type: "failed", url: href, backend: plan.backend, message });
      }
      facadeServed(href, plan);
      facades.add(fileOf(href));
      return { format: "module", shortCircuit: true, source: facadeSource(input(info(href, plan, "module"), plan, lexed.hasDefault)) };
    }
    if (context.conditions?.includes("require") === true) {
      // The hooks of module.register see a require() only where another hook returned a CommonJS
      // module's source (Node 20): Node loads it as it would without us.
      if (mode !== "registerHooks") return result;
      // require(): the module itself, its registration modules required once it has loaded.
      const source = text(result.source ?? fs.readFileSync(url.fileURLToPath(href)));
      const registrations = plan.registrations.map((r) => {
        const missing = unloadableRegistration(r.url);
        return { plugin: r.plugin, url: r.url, ...(missing === undefined ? {} : { missing }) };
      });
      facadeServed(href, plan);
      return {
        ...result,
        format,
        source: instrument(source, { module: info(href, plan, "commonjs"), registrations, runtime: runtime.cjs }),
      };
    }
    // import() of a module that require() has loaded already: its epilogue ran them; Node hands out its exports.
    if (mode === "registerHooks" && requireCacheEntry(href)?.loaded === true) return result;
    facadeServed(href, plan);
    facades.add(fileOf(href));
    return { format: "module", shortCircuit: true, source: facadeSource(input(info(href, plan, "commonjs"), plan, true)) };
  };

  const { resolvedFormats, originalFormat } = resolvedFormatsOf(discovery);

  /** The last importer whose scope was learned: consecutive imports usually share one. */
  let lastParent: string | undefined;

  /** What resolve() does with Node's answer. Runs for every module, so it allocates nothing on the common path. */
  const learn = (specifier: string, result: ResolveResult, context: Context): ResolveResult => {
    try {
      const href = result.url;
      if (!href.startsWith("file:")) return result;
      // A "./" import stays in the importer's package, which is known: learning runs for imports that can cross into
      // another package, and this hook runs for every module (mostly still in the interpreter at start-up).
      if (!specifier.startsWith("./")) {
        // The importer's scope too: a module loaded before the hooks were installed (the one that
        // called install(), say) is otherwise never seen, and its package may list the plugins.
        const parent = context.parentURL;
        if (parent !== lastParent) {
          lastParent = parent;
          if (parent !== undefined) discovery.learn(parent);
        }
        discovery.learn(href);
        if (discovery.version !== version) sync();
      }
      // A registration module about to load, from a facade or from the app (in-thread, load() may be detached then).
      if (matcher.registers?.(href) === true) report({ type: "registration", url: href });
      // JavaScript only: JSON, wasm and anything imported with attributes pass untouched.
      if (!matcher.watches(href) || !isJavaScript(result.format) || hasKeys(context.importAttributes)) return result;
      const plan = matcher.match(href);
      if (plan === undefined) return result;
      // Off-thread (Node 20), a require() in a CommonJS TypeScript file whose source a loader gave (tsx's .cts) comes here with
      // the file's URL: a facade cannot be required. It loads as itself, unseen, as plain Node's require() does (the audit says
      // so). A .cjs or .js file's import() of a file URL looks the same, and gets its facade: only a loader gives CommonJS source.
      const parent = context.parentURL;
      if (async && specifier === href && parent !== undefined && typeScriptCjs.test(parent) && isCommonJs(discovery.formatOf?.(parent))) {
        hookedRequires.add(href);
        return result;
      }
      resolvedFormats.set(href, result.format);
      // A registration module importing its own dispatch module while a facade of it waits for the module: import() of a
      // facade would never settle, so it gets the original of the instance it names (the one a facade of that URL re-exports).
      const own = parent !== undefined && facades.has(fileOf(href)) && options.ran?.(parent) !== true;
      if (own && plan.registrations.some((r) => r.url === parent))
        return { url: awaitLoad(originalUrl(href), context), format: result.format, shortCircuit: true };
      awaitLoad(href, context);
      return result;
    } catch {
      return result;
    }
  };

  function resolve(specifier: string, context: Context, nextResolve: NextResolve): Maybe<ResolveResult> {
    if (settled && generating === 0) {
      settled = false;
      if (awaited.size === 0) idle();
    }
    // A URL of ours once handed out is always served, even after disable(): a module graph that is
    // still loading must not find it gone.
    if (specifier.includes(TAG)) {
      if (parseVirtual(specifier) !== undefined) return { url: awaitLoad(specifier, context), format: "module", shortCircuit: true };
      const real = parseOriginal(specifier);
      if (real !== undefined) return { url: awaitLoad(specifier, context), format: originalFormat(real), shortCircuit: true };
    }
    // What generated code imports by exact URL: the runtime, and a module's own URL from the line appended to it. Both
    // are known; resolving them again costs every module instance a file lookup and a package.json scope lookup.
    if (specifier === runtime.esm) return { url: specifier, format: "module", shortCircuit: true };
    if (specifier === context.parentURL && specifier.startsWith("file:")) return { url: specifier, shortCircuit: true };
    if (!enabled()) return nextResolve(specifier, context);
    if (async) return resolving(nextResolve, specifier, context, matcher, report, learn);
    // In-thread, inline: this runs for every module, mostly in the interpreter at start-up.
    try {
      return learn(specifier, nextResolve(specifier, context) as ResolveResult, context);
    } catch (error) {
      throw said(matcher, report, specifier, context.parentURL, error);
    }
  }

  /**
   * Builds what `href` serves from what `loaded` gives, counted as generating. What the next hook
   * throws reaches Node as it would without us; a failure of our own is reported, and `loaded`
   * itself (the module as the next hook gave it, or an empty marker) is served instead.
   */
  const build = (href: string, backend: string, loaded: Maybe<LoadResult>, make: (loaded: LoadResult) => LoadResult) => {
    loading(href);
    generating++;
    try {
      return then(loaded, (value) => {
        try {
          return make(value);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          report({ type: "failed", url: parseVirtual(href)?.original ?? parseOriginal(href) ?? href, backend, message });
          return value;
        }
      });
    } finally {
      generating--;
    }
  };
  const empty: LoadResult = { format: "module", shortCircuit: true, source: "" };
  const registration = (href: string, r: LoadResult): LoadResult =>
    isEsm(r.format) && r.source != null ? { ...r, source: enterOnStart(text(r.source), href, runtime.esm) } : r;

  function load(href: string, context: Context, nextLoad: NextLoad): Maybe<LoadResult> {
    if (href.includes(TAG)) {
      const v = parseVirtual(href);
      if (v !== undefined) return build(href, "?", empty, () => marker(v));
      const real = parseOriginal(href);
      // Off-thread, a CommonJS original was required by its facade's "require" marker: with no source, Node hands out
      // that module. Another loader's source (tsx's, for .cts) would run it again, a second instance: the chain is not asked.
      if (real !== undefined && async && isCommonJs(context.format)) {
        loading(href);
        return { format: "commonjs", source: null, shortCircuit: true };
      }
      if (real !== undefined) return build(href, "?", nextLoad(href, context), (result) => originalResult(real, result));
    }
    if (enabled() && matcher.registers?.(href) === true && matcher.match(href) === undefined)
      return build(href, "?", nextLoad(href, context), (r) => registration(href, r));
    if (!enabled() || !matcher.watches(href) || hasKeys(context.importAttributes) || hookedRequires.delete(href))
      return nextLoad(href, context);
    const plan = matcher.match(href);
    if (plan === undefined) return nextLoad(href, context);
    return build(href, plan.backend, nextLoad(href, context), (result) => serve(href, plan, context, result));
  }

  return {
    resolve,
    load,
    /** The hooks stop changing anything (module.register cannot be undone). */
    disable() {
      on = false;
    },
  };
}
