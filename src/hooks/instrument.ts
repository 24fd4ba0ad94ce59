/**
 * What the loader does to a watched module's own source, appending only, so that every line and
 * column stays where it was: the epilogues (a CommonJS module that require() loads under in-thread
 * hooks; an ES module with no registration module), and an ES original's `import.meta`. Pure
 * functions: every value interpolated through JSON.stringify, every identifier declared free in the
 * source, and a trailing `//# sourceMappingURL` (or `sourceURL`) comment repeated so that it stays last.
 */
import { url } from "../builtins.js";
import type { ModuleInfo } from "../channel.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import { importMetaSpans } from "./export-names.js";
import { windowInfo } from "./facade.js";
import type { PlannedRegistration } from "./matcher.js";

export interface EpilogueInput {
  readonly module: ModuleInfo;
  /** Each with `missing` set when it cannot be loaded (module-facts.ts): recorded, never required. */
  readonly registrations: ReadonlyArray<PlannedRegistration & { readonly missing?: string }>;
  /** The path (or specifier) of dispatch-hook's CommonJS runtime, for require(). */
  readonly runtime: string;
}

/**
 * The CommonJS epilogue: the module keeps its file name, so require.resolve(), __filename,
 * require.cache and stack traces name the real file. It announces `module.exports` at the end of the
 * body; the registration modules are required once the module has finished loading, when its loader
 * first reads `module.exports` to hand it over (Node's Module#load and Module._load, Jest's
 * requireModule): an ES registration module importing the dispatch module back would fail with
 * ERR_REQUIRE_CYCLE_MODULE while it is still loading (Node 22, 24, 26).
 */
export function instrument(source: string, input: EpilogueInput): string {
  if (typeof source !== "string") {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_SOURCE", `instrument(): source must be a string, got ${describe(source)}.`);
  }
  const id = freeIdentifier(source);
  const info = JSON.stringify(input.module);
  const registrations = JSON.stringify(
    input.registrations.map((r) => ({
      window: windowInfo(input.module, r),
      path: pathOf(r.url),
      ...(r.missing === undefined ? {} : { missing: r.missing }),
    })),
  );
  const epilogue =
    `;{const ${id}=require(${JSON.stringify(input.runtime)});${id}.signalEvaluated(${info},module.exports);` +
    `${id}.requireWhenLoaded(module,${info},require,${registrations});}`;
  return append(source, epilogue);
}

/**
 * The ES epilogue, for a watched module no plugin has a registration module for: it imports its own
 * namespace (the exact URL, so the same instance) and announces the table. No generated module and no
 * second URL: import.meta, resolution, stack traces, and import() beside require() see the module itself.
 * Short, since every instance's source is compiled and kept with it (not `import.meta.url`: Node
 * builds a module's import.meta object the first time it is read).
 */
export function esmEpilogue(source: string, module: ModuleInfo, runtime: string): string {
  if (typeof source !== "string") {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_SOURCE", `esmEpilogue(): source must be a string, got ${describe(source)}.`);
  }
  const ns = freeIdentifier(source);
  const signal = `${ns}s`;
  const { url, backend, exportName } = module;
  const epilogue =
    `;import*as ${ns} from${JSON.stringify(module.url)};import{signalEvaluated as ${signal}}from${JSON.stringify(runtime)};` +
    `${signal}(${JSON.stringify({ url, backend, exportName })},${ns});`;
  return append(source, epilogue);
}

/**
 * An ES registration module, with one statement put first in its body: the call that enters its own
 * window (window.ts). Its body runs when everything it imports has: where that awaited (a dependency
 * that two plugins share), in whatever context the last of them left, so the module says whose it is.
 * Inserted on the first line (after a hashbang), so every other line keeps its place.
 */
export function enterOnStart(source: string, href: string, runtime: string): string {
  const id = freeIdentifier(source);
  const at = source.startsWith("#!") ? source.indexOf("\n") + 1 : 0;
  if (at === 0 && source.startsWith("#!")) return source; // a hashbang and nothing else
  const call = `import{enter as ${id}}from${JSON.stringify(runtime)};${id}(${JSON.stringify(href)});`;
  return `${source.slice(0, at)}${call}${source.slice(at)}`;
}

/** What require() takes for a registration module: its path, or the URL itself if it is not a file URL. */
function pathOf(href: string): string {
  try {
    return url.fileURLToPath(href);
  } catch {
    return href;
  }
}

/** A name that occurs nowhere in `source`, so no binding of the module can collide with ours. */
function freeIdentifier(source: string): string {
  let n = 0;
  while (source.includes(`__dh${n}`)) n++;
  return `__dh${n}`;
}

/** `line` after the last line of `code`, then the source map comments ending `source` again: engines use the last one. */
function append(code: string, line: string, source = code): string {
  const separator = code.length === 0 || code.endsWith("\n") ? "" : "\n";
  return `${code}${separator}${line}\n${trailingDirectives(source)}`;
}

/** The `//# sourceMappingURL=` / `//# sourceURL=` comments ending `source`. */
function trailingDirectives(source: string): string {
  // Read from the end, a line at a time: the rest of a large module is never split or copied.
  const kept: string[] = [];
  for (let end = source.length; end > 0; ) {
    const start = source.lastIndexOf("\n", end - 1) + 1;
    const line = source.slice(start, end).trim();
    end = start - 1;
    if (line === "") continue;
    if (!/^\/\/[#@]\s*source(?:Mapping)?URL=\S*$/.test(line)) break;
    kept.unshift(line);
  }
  return kept.length === 0 ? "" : `${kept.join("\n")}\n`;
}

const CALL_LENGTH = "import.meta".length;
const names = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** A function name that occurs nowhere in `source`, whose call is exactly as long as `import.meta`. */
function freeName(source: string): string | undefined {
  for (const c of names) {
    const name = `_dhMeta${c}$`;
    if (!source.includes(name)) return name;
  }
  return undefined;
}

/** The source with every `import.meta` replaced, and the declaration to append; or the source as it was. */
function rewriteImportMeta(source: string, href: string): { readonly code: string; readonly declaration?: string } {
  if (!source.includes("meta")) return { code: source };
  let spans: Array<readonly [number, number]>;
  try {
    spans = importMetaSpans(source);
  } catch {
    return { code: source };
  }
  // A span across lines is left as it is: replacing it would move the lines after it.
  spans = spans.filter(([start, end]) => end - start >= CALL_LENGTH && !/[\n\r\u2028\u2029]/.test(source.slice(start, end)));
  const name = freeName(source);
  if (spans.length === 0 || name === undefined) return { code: source };
  let code = "";
  let at = 0;
  for (const [start, end] of spans) {
    code += `${source.slice(at, start)}${name}()${" ".repeat(end - start - CALL_LENGTH)}`;
    at = end;
  }
  code += source.slice(at);
  const url = JSON.stringify(href);
  return { code, declaration: `;function ${name}(){if(!${name}.d){${name}.d=1;try{import.meta.url=${url}}catch{}}return import.meta}` };
}

/**
 * An ES original served at its second URL (virtual-modules.ts), changed so that it still sees its own
 * URL. Each `import.meta` becomes a call of the same length (`_dhMeta0$()`, space-padded) to a hoisted
 * function appended at the end, which sets `import.meta.url` to the module's own URL once and returns
 * `import.meta` itself, so its other members (`filename`, `dirname`, `resolve`, `main`, a host's) are
 * the module's. es-module-lexer finds the expressions, never in strings or comments; a module it cannot
 * read keeps its `import.meta`. A `//# sourceURL=` names the module's own URL, so stack frames name it
 * (and Node 20 to 26 find a `sourceMappingURL` map through it), unless the module names its own.
 */
export function originalSource(source: string, href: string): string {
  const { code, declaration } = rewriteImportMeta(source, href);
  const lines = declaration === undefined ? [] : [declaration];
  if (!/^[ \t]*\/\/[#@][ \t]*sourceURL=/m.test(source) && !/[\n\r\u2028\u2029]/.test(href)) lines.push(`//# sourceURL=${href}`);
  return lines.length === 0 ? code : append(code, lines.join("\n"), source);
}
