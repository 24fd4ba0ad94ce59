/**
 * Node's module hooks, built by a factory so that each installation has its own state. One
 * implementation serves both of Node's hook APIs: `module.registerHooks` (in-thread, synchronous)
 * and `module.register` (off-thread, asynchronous; see hooks-thread.ts).
 *
 * - resolve: learns the package scope of every resolved module (discovery), and sends importers of
 *   a watched dispatch module that plugins have registration modules for to its facade (facade.ts).
 *   Never the module itself, nor the facade and its markers, which import the original.
 * - load: generates the facades and their markers, and appends the signal (instrument.ts) to a
 *   watched ES module that no plugin has a registration module for. Every other module is returned
 *   exactly as the next hook gave it.
 * A hook never throws because of dispatch-hook: a failure is reported, and the module loads as it
 * would without the loader.
 */
import { fs, url } from "../builtins.js";
import type { ModuleInfo } from "../channel.js";
import type { HookConfig } from "./discovery.js";
import { hasDefaultExport } from "./export-names.js";
import { cjsFacadeSource, type FacadeInput, facadeSource, markerSource } from "./facade.js";
import type { HookOptions } from "./hook-options.js";
import { esmEpilogue } from "./instrument.js";
import { Matcher, type ModulePlan } from "./matcher.js";
import {
  type Context,
  hasKeys,
  isCommonJs,
  isJavaScript,
  isLoading,
  type LoadResult,
  type Maybe,
  missing,
  type NextLoad,
  type NextResolve,
  type ResolveResult,
  requireCacheEntry,
  text,
  then,
} from "./module-facts.js";

export type { HookOptions, HookReport, WatchList } from "./hook-options.js";
export type { LoadResult, ResolveResult } from "./module-facts.js";

import { parseVirtual, VIRTUAL_TAG, type VirtualModule, virtualUrl } from "./virtual-modules.js";

/** The hook pair of one installation. */
export function createHooks(options: HookOptions) {
  const { discovery, mode, runtime, report } = options;
  const watchList = options.watchList ?? ((config: HookConfig) => new Matcher(config.rules, config.plugins));
  let matcher = watchList(discovery.config());
  let version = discovery.version;
  /** Originals whose facade was generated: an ES original loaded without one was reached some other way. */
  const facaded = new Set<string>();
  let on = true;
  const stillWanted = options.enabled;
  const enabled = stillWanted === undefined ? () => on : () => on && stillWanted();
  // registerHooks calls the hooks synchronously and its next steps answer synchronously; only the
  // hooks thread (module.register) gets promises back.
  const async = mode === "register";
  const needLoad = options.needLoad ?? (() => {});
  const idle = options.idle ?? (() => {});
  // The generated modules load() has served, and those handed out (or named in a generated module's
  // source) that it has not served yet. Once served, an import finds the module in Node's module
  // map for good, and a require() while require.cache holds it: neither calls load() again, so
  // handing the URL out again does not need load() attached.
  const served = new Set<string>();
  const awaited = new Set<string>();
  let settled = false;
  /** Generated modules being built: a resolve() meanwhile (es-module-lexer's require, say) must not detach load(). */
  let generating = 0;
  const awaitLoad = (href: string, context: Context): string => {
    const required = context.conditions?.includes("require") === true;
    if (!served.has(href) || (required && requireCacheEntry(href) === undefined) || hasKeys(context.importAttributes)) {
      awaited.add(href);
      needLoad();
    }
    return href;
  };
  const sync = () => {
    if (discovery.version === version) return;
    version = discovery.version;
    const config = discovery.config();
    matcher = watchList(config);
    report({ type: "config", config });
  };

  const input = (module: ModuleInfo, plan: ModulePlan, hasDefault: boolean): FacadeInput => ({
    module,
    original: module.url,
    runtime: runtime.esm,
    hasDefault,
    registrations: plan.registrations.map((r) => {
      const gone = missing(r.url);
      return { plugin: r.plugin, url: r.url, specifier: r.url, ...(gone === undefined ? {} : { missing: gone }) };
    }),
    // The facade imports its markers as soon as it has loaded: awaited from now, so that load()
    // stays attached in between.
    marker: (kind, index) => awaitLoad(virtualUrl(module.url, kind, index, module.format === "commonjs"), {}),
    ...(module.format === "commonjs" ? { requirePath: url.fileURLToPath(module.url) } : {}),
  });

  const generate = (v: VirtualModule, context: Context, nextLoad: NextLoad): Maybe<LoadResult> => {
    const plan = matcher.match(v.original) ?? { backend: "?", exportName: "?", registrations: [] };
    const module: ModuleInfo = {
      url: v.original,
      backend: plan.backend,
      exportName: plan.exportName,
      format: v.commonjs ? "commonjs" : "module",
    };
    if (v.kind === "cjs-facade") {
      facaded.add(v.original);
      report({ type: "facade", url: v.original, backend: plan.backend });
      const cjs = { ...input({ ...module, format: "commonjs" }, plan, true), runtime: runtime.cjs };
      return {
        format: "commonjs",
        shortCircuit: true,
        source: cjsFacadeSource({ ...cjs, registrations: cjs.registrations.map((r) => ({ ...r, specifier: url.fileURLToPath(r.url) })) }),
      };
    }
    if (v.kind !== "facade") {
      return { format: "module", shortCircuit: true, source: markerSource(v.kind, v.index, input(module, plan, false)) };
    }
    // Node merges the context given to nextLoad into the current load's, so the facade's own format
    // ("module") must be cleared explicitly, or the original would be loaded as an ES module.
    const passthrough: Context = { format: undefined, conditions: context.conditions ?? [], importAttributes: {} };
    return then(nextLoad(v.original, passthrough), (original) => {
      // Node 22+ leaves the format out for a CommonJS module that require() has already loaded:
      // then the extension and the package's "type" decide.
      const commonjs = isCommonJs(original.format ?? discovery.formatOf?.(v.original));
      let hasDefault = true;
      if (!commonjs) {
        const lexed = hasDefaultExport(text(original.source ?? fs.readFileSync(url.fileURLToPath(v.original))));
        hasDefault = lexed.hasDefault;
        if (!lexed.exact)
          report({
            type: "failed",
            url: v.original,
            backend: plan.backend,
            message: "its export names could not be read exactly; the facade guessed whether it has a default export",
          });
      }
      const source = facadeSource(input({ ...module, format: commonjs ? "commonjs" : "module" }, plan, hasDefault));
      facaded.add(v.original);
      report({ type: "facade", url: v.original, backend: plan.backend });
      return { format: "module", shortCircuit: true, source };
    });
  };

  /** The last importer whose scope was learned: consecutive imports usually share one. */
  let lastParent: string | undefined;

  /** What resolve() does with Node's answer. Runs for every module, so it allocates nothing on the common path. */
  const redirect = (specifier: string, result: ResolveResult, context: Context): ResolveResult => {
    try {
      const href = result.url;
      if (!href.startsWith("file:")) return result;
      // A "./" import stays in the importer's package, which is known: learning runs for imports
      // that can cross into another package, and this hook runs for every module (mostly still
      // in the interpreter at start-up, where each step counts).
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
      // JavaScript only: JSON, wasm and anything imported with attributes pass untouched.
      if (!matcher.watches(href) || !isJavaScript(result.format) || hasKeys(context.importAttributes)) return result;
      // The original itself, for its facades, their markers and its own self-import.
      const parent = context.parentURL;
      if (parent !== undefined && (parent === href || parseVirtual(parent)?.original === href)) return result;
      const plan = matcher.match(href);
      if (plan === undefined) return result;
      // require() of a CommonJS module keeps its CommonJS semantics: it gets a CommonJS facade, and
      // while the module is still loading (a require cycle through it) the module itself, with
      // the partial exports a cycle gives. An ES facade would turn the cycle into
      // ERR_REQUIRE_CYCLE_MODULE (Node 22, 24, 26).
      const format = result.format ?? discovery.formatOf?.(href);
      const esm = format === "module" || format === "module-typescript";
      if (context.conditions?.includes("require") && !esm) {
        if (mode !== "registerHooks" || isLoading(href)) return result;
        return { ...result, url: awaitLoad(virtualUrl(href, "cjs-facade"), context), format: "commonjs" };
      }
      // An ES module no plugin has a registration module for keeps its own URL: load() appends the
      // signal to it (instrument.ts). A facade is what runs registration modules after its body.
      if (esm && plan.registrations.length === 0 && !facaded.has(href)) {
        awaitLoad(href, context);
        return result;
      }
      return { ...result, url: awaitLoad(virtualUrl(href, "facade"), context), format: "module" };
    } catch {
      return result;
    }
  };

  function resolve(specifier: string, context: Context, nextResolve: NextResolve): Maybe<ResolveResult> {
    if (settled && generating === 0) {
      settled = false;
      if (awaited.size === 0) idle();
    }
    // A virtual URL once handed out is always served, even after disable(): a module graph that
    // is still loading must not find it gone.
    if (specifier.includes(VIRTUAL_TAG) && parseVirtual(specifier) !== undefined)
      return { url: awaitLoad(specifier, context), format: "module", shortCircuit: true };
    // What generated code imports by exact URL: the runtime, and a module's own URL from the line
    // appended to it. Both are known; resolving them again costs every module instance a file
    // lookup and a package.json scope lookup.
    if (specifier === runtime.esm) return { url: specifier, format: "module", shortCircuit: true };
    if (specifier === context.parentURL && specifier.startsWith("file:")) return { url: specifier, shortCircuit: true };
    if (!enabled()) return nextResolve(specifier, context);
    const result = nextResolve(specifier, context);
    if (async) return (result as Promise<ResolveResult>).then((r) => redirect(specifier, r, context));
    return redirect(specifier, result as ResolveResult, context);
  }

  function load(href: string, context: Context, nextLoad: NextLoad): Maybe<LoadResult> {
    const v = href.includes(VIRTUAL_TAG) ? parseVirtual(href) : undefined;
    if (v !== undefined) {
      served.add(href);
      awaited.delete(href);
      // Detached by a later resolve(), not here, nor while this builds the module.
      if (awaited.size === 0) settled = true;
      generating++;
      try {
        return generate(v, context, nextLoad);
      } catch (error) {
        report({ type: "failed", url: v.original, backend: "?", message: error instanceof Error ? error.message : String(error) });
        // The facade cannot be built: stand in for the original unchanged.
        return {
          format: "module",
          shortCircuit: true,
          source: v.kind === "facade" ? `export * from ${JSON.stringify(v.original)};\n` : "",
        };
      } finally {
        generating--;
      }
    }
    if (!enabled() || !matcher.watches(href)) return nextLoad(href, context);
    const plan = matcher.match(href);
    if (plan === undefined) return nextLoad(href, context);
    if (awaited.delete(href)) {
      served.add(href);
      if (awaited.size === 0) settled = true;
    }
    return then(nextLoad(href, context), (result) => {
      const esm = result.format === "module" || result.format === "module-typescript";
      // Loaded without a facade (a facade is generated before its original loads): resolve chose this
      // route, and what discovery learned since cannot change it, so the module signals either way.
      if (esm && !facaded.has(href) && result.source != null && !hasKeys(context.importAttributes)) {
        try {
          const module: ModuleInfo = { url: href, backend: plan.backend, exportName: plan.exportName, format: "module" };
          const source = esmEpilogue(text(result.source), module, runtime.esm);
          report({ type: "facade", url: href, backend: plan.backend });
          if (plan.registrations.length > 0) {
            const message =
              "it was reached without its facade, by a resolution the hooks could not redirect: its table signals, but its plugins' registration modules did not run for it";
            report({ type: "failed", url: href, backend: plan.backend, message });
          }
          return { ...result, source };
        } catch (error) {
          report({ type: "failed", url: href, backend: plan.backend, message: error instanceof Error ? error.message : String(error) });
          return result;
        }
      }
      // Reached without a facade: by a require() the hooks do not see (module.register), which
      // loader-findings.ts reports from require.cache, or by some other route, reported here.
      const unseenRequire = mode !== "registerHooks" && isCommonJs(result.format);
      if (isJavaScript(result.format) && !facaded.has(href) && !unseenRequire) {
        report({
          type: "failed",
          url: href,
          backend: plan.backend,
          message: "it was reached without its facade, by a resolution the hooks could not redirect, so its table will not signal",
        });
      }
      return result;
    });
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
