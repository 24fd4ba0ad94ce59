/**
 * What the hooks exchange with Node (the shapes its hook API passes, and small facts about a module:
 * its format, its source as text, what require() has cached) and with their installation.
 */
import { fs, nodeModule, path, url } from "../builtins.js";
import type { ModuleInfo } from "../channel.js";
import type { Discovery, HookConfig } from "./discovery.js";
import type { FacadeInput, FacadeRegistration } from "./facade.js";
import { originalSource } from "./instrument.js";
import type { ModulePlan } from "./matcher.js";
import { originalUrl, virtualUrl } from "./virtual-modules.js";

export interface LoadResult {
  format?: string | null | undefined;
  source?: string | ArrayBuffer | ArrayBufferView | null | undefined;
  shortCircuit?: boolean | undefined;
}
export interface ResolveResult {
  url: string;
  format?: string | null | undefined;
  shortCircuit?: boolean | undefined;
}
export type Context = {
  format?: string | null | undefined;
  conditions?: readonly string[];
  importAttributes?: Record<string, string>;
  parentURL?: string | undefined;
};
export type Maybe<T> = T | Promise<T>;
export type NextResolve = (specifier: string, context?: Context) => Maybe<ResolveResult>;
export type NextLoad = (url: string, context?: Context) => Maybe<LoadResult>;

/** What the hooks tell their installation. Crosses the thread boundary on Node 20. */
export type HookReport =
  | { readonly type: "facade"; readonly url: string; readonly backend: string; readonly plugins: readonly string[] }
  /** A plugin's registration module resolved (from a facade, or imported by the app itself): it is about to load. */
  | { readonly type: "registration"; readonly url: string }
  | { readonly type: "failed"; readonly url: string; readonly backend: string; readonly message: string }
  /** A plugin's registration module imports what does not resolve: its backend's dispatch module never finishes. */
  | { readonly type: "unresolved"; readonly backend: string; readonly message: string }
  | { readonly type: "config"; readonly config: HookConfig };

/** What generated code is told of a watched module instance. */
export function info(url: string, p: ModulePlan, format: ModuleInfo["format"]): ModuleInfo {
  return { url, backend: p.backend, exportName: p.exportName, format };
}

/** Which modules are watched, and how; rebuilt when discovery learns something. */
interface WatchList {
  watches(url: string): boolean;
  match(url: string): ModulePlan | undefined;
  unresolved(specifier: string, parent: string | undefined, error: unknown): Array<{ backend: string; message: string }>;
  registers?(url: string): boolean;
}

export interface HookOptions {
  readonly discovery: Pick<Discovery, "version" | "config" | "learn"> & Partial<Pick<Discovery, "formatOf">>;
  /** Builds the watch list from the config (default: a Matcher). The corpus test watches everything. */
  readonly watchList?: (config: HookConfig) => WatchList;
  readonly mode: "registerHooks" | "register";
  /** The runtime that ES facades import (a file URL) and CommonJS facades require (a path). */
  readonly runtime: { readonly esm: string; readonly cjs: string };
  readonly report: (message: HookReport) => void;
  /** Whether the installation still wants changes made (default: until disable()). */
  readonly enabled?: () => boolean;
  /** Called before resolve() hands out a URL only load() can serve: in-thread hooks attach load() then (hook-api.ts). */
  readonly needLoad?: () => void;
  /**
   * Called from resolve() (never while load() builds a module) once every generated module handed out
   * has loaded: in-thread hooks detach load() until needLoad(). A running load keeps the chain it started with.
   */
  readonly idle?: () => void;
  /**
   * Whether a registration module has finished in the installation's thread, for an earlier
   * instance of its dispatch module. Once every one has, a new instance (`?v=2`) needs no windows.
   */
  readonly ran?: (registrationModule: string) => boolean;
}

/** Says first, where `parent` is a plugin's registration module, that its import of `specifier` failed; gives the error back. */
export function said(
  watch: WatchList,
  report: (message: HookReport) => void,
  specifier: string,
  parent: string | undefined,
  error: unknown,
) {
  for (const message of watch.unresolved(specifier, parent, error)) report({ type: "unresolved", ...message });
  return error;
}

/**
 * Off-thread (module.register, whose next steps answer with promises): the next resolve step, its
 * answer through `resolved`; a rejection goes on unchanged once said (see said()).
 */
export function resolving(
  next: NextResolve,
  specifier: string,
  context: Context,
  watch: WatchList,
  report: (message: HookReport) => void,
  resolved: (specifier: string, result: ResolveResult, context: Context) => ResolveResult,
): Promise<ResolveResult> {
  return (next(specifier, context) as Promise<ResolveResult>).then(
    (r) => resolved(specifier, r, context),
    (error: unknown) => Promise.reject(said(watch, report, specifier, context.parentURL, error)),
  );
}

/** The original at its second URL: an ES module sees its own URL; a CommonJS one is Node's, file name and all. */
export function originalResult(real: string, result: LoadResult): LoadResult {
  if (!isEsm(result.format) || result.source == null) return result;
  return { ...result, source: originalSource(text(result.source), real) };
}

export function then<T, U>(value: Maybe<T>, next: (value: T) => U): Maybe<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

export function text(source: LoadResult["source"]): string {
  if (typeof source === "string") return source;
  // Buffer, not TextDecoder: the global TextDecoder is a lazy getter that replaces itself on
  // globalThis when first touched, and node:util costs milliseconds to load at start-up.
  if (ArrayBuffer.isView(source)) return Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString("utf8");
  if (source instanceof ArrayBuffer) return Buffer.from(source).toString("utf8");
  return "";
}

/** Whether an object has an own enumerable key, without allocating the list of them. */
export function hasKeys(value: object | undefined): boolean {
  for (const key in value) if (Object.hasOwn(value as object, key)) return true;
  return false;
}

export function isJavaScript(format: string | null | undefined): boolean {
  return (
    format === undefined ||
    format === null ||
    format === "module" ||
    format === "commonjs" ||
    format === "module-typescript" ||
    format === "commonjs-typescript"
  );
}

export function isEsm(format: string | null | undefined): boolean {
  return format === "module" || format === "module-typescript";
}

export function isCommonJs(format: string | null | undefined): boolean {
  return format === "commonjs" || format === "commonjs-typescript";
}

/** What require() has cached under this file URL, if anything. */
export function requireCacheEntry(href: string): { readonly loaded: boolean } | undefined {
  try {
    return nodeModule.createRequire(href).cache[url.fileURLToPath(href)];
  } catch {
    return undefined;
  }
}

/** What a registration module may be: JavaScript or TypeScript, in either module system. */
const codeModule = /\.[cm]?[jt]sx?$/;

/**
 * Why a registration module at `file` cannot be loaded as one (what follows its name in a message),
 * or undefined when it can. One rule for every host: the loader's facades and require() epilogues,
 * the adapters and doctor. A path that does not exist, a directory, or a file that is not code (a
 * README, a package.json) is skipped and recorded, never handed to the host, whose error would name
 * no plugin and fail the backend's import. A file with no extension is code: Node loads it as its
 * package's type, with import() and require() alike.
 */
export function registrationFault(file: string): string | undefined {
  // The common case, a code file, costs one existsSync (a Stats object costs start-up time).
  if (codeModule.test(file)) return fs.existsSync(file) ? undefined : "does not exist";
  let stats: ReturnType<typeof fs.statSync>;
  try {
    stats = fs.statSync(file, { throwIfNoEntry: false });
  } catch {
    stats = undefined;
  }
  if (stats === undefined) return "does not exist";
  if (stats.isDirectory()) return "is a directory, not a module file";
  if (!stats.isFile()) return "is not a file";
  const extension = path.extname(file);
  if (extension !== "") return `is not a JavaScript or TypeScript module (${JSON.stringify(extension)})`;
  return undefined;
}

/** The message a registration module that cannot be loaded is recorded with (runtime/window.ts), or undefined. */
export function unloadableRegistration(href: string): string | undefined {
  let file: string;
  try {
    file = url.fileURLToPath(href);
  } catch {
    return `Cannot find the registration module ${href}`;
  }
  const fault = registrationFault(file);
  if (fault === undefined) return undefined;
  return fault === "does not exist" ? `Cannot find the registration module ${file}` : `The registration module ${file} ${fault}`;
}

/**
 * A facade's registration modules: each imported by its URL, one that cannot be loaded recorded as
 * missing (unloadableRegistration), and one that `required` says so required by its path (facade.ts:
 * on Node 20's off-thread hooks, Node's ES module translator breaks a CommonJS one whose source
 * another loader gave, and turns its throw into an uncaught exception).
 */
export function facadeRegistrations(
  registrations: ReadonlyArray<{ readonly plugin: string; readonly url: string }>,
  required: (href: string) => boolean,
): FacadeRegistration[] {
  return registrations.map(({ plugin, url: href }) => {
    const missing = unloadableRegistration(href);
    if (missing !== undefined) return { plugin, url: href, specifier: href, missing };
    return { plugin, url: href, specifier: href, ...(required(href) ? { requirePath: url.fileURLToPath(href) } : {}) };
  });
}

/** What a facade of one installation imports, and how (facade.ts). */
export interface FacadeSetting {
  /** Notes a URL generated code will import, so that load() stays attached until it is loaded. */
  readonly awaitLoad: (href: string, context: Context) => string;
  readonly runtime: string;
  /** Whether a registration module is required by its done marker (a CommonJS one, off-thread on Node 20). */
  readonly required: (href: string) => boolean;
  /** Whether the hooks see require() (module.registerHooks). */
  readonly seeRequire: boolean;
}

/** A facade's input: it imports its original and its markers as soon as it has loaded, so each is awaited from now. */
export function facadeInput(module: ModuleInfo, plan: ModulePlan, hasDefault: boolean, setting: FacadeSetting): FacadeInput {
  const commonjs = module.format === "commonjs";
  const original = setting.awaitLoad(originalUrl(module.url), {});
  return {
    module,
    original,
    runtime: setting.runtime,
    hasDefault,
    registrations: facadeRegistrations(plan.registrations, setting.required),
    marker: (kind, index) => setting.awaitLoad(virtualUrl(module.url, kind, index, commonjs), {}),
    // Where the hooks see require(), the "require" marker requires the original's URL, which they
    // serve as the module itself; elsewhere Node requires the file.
    ...(commonjs ? { requirePath: setting.seeRequire ? original : url.fileURLToPath(module.url) } : {}),
  };
}

const typeScript = /\.[cm]?ts(?:[?#]|$)/;

/**
 * The format the rest of the resolve chain gave each watched module: its original's URL resolves
 * with it, so the next loader's load gets it (tsx's passes it on; without one Node 20 throws
 * ERR_UNKNOWN_FILE_EXTENSION for .ts). null stays null (Node 22+ reads a typeless .js file's
 * syntax); TypeScript that nothing after ours gave one (tsx resolved it first) gets its extension's.
 */
export function resolvedFormatsOf(discovery: { formatOf?: (href: string) => string | undefined }) {
  const resolvedFormats = new Map<string, string | null | undefined>();
  const originalFormat = (real: string): string | null | undefined => {
    const format = resolvedFormats.get(real);
    return format ?? (typeScript.test(real) ? discovery.formatOf?.(real) : format);
  };
  return { resolvedFormats, originalFormat };
}
