/**
 * Types named by text, for declarations that must not import what they name (package.json, or a
 * backend that does not want to load JAX to say it takes JAX arrays): `"specifier#Export"` (or
 * `"~specifier#Export"`, spatch's spelling) with subclasses, `"=specifier#Export"` that class only,
 * `"@specifier#Export"` an abstract type, asked of each value and loaded the first time one needs it.
 *
 * A class name is never imported: a class is that type when its name is the export's and either
 * require.cache holds the module with that very class as the export, or the class's own source text
 * is in the module's file (an ES module imported with `import` is in no cache Node exposes). So the
 * specifier must name the module that defines the class, not one that re-exports it. The file is
 * read once, on the first value whose class has the name. A TypeScript file that Node runs itself
 * is compared as Node runs it, its types stripped (the class's text no longer has them). A module
 * not loaded has no class, but a class of the same name with the same source text, written
 * elsewhere, counts as the export: telling them apart would need the module loaded.
 */
import { fs, nodeModule, path } from "../builtins.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import { type LazyImpl, parseLazyImpl, requireFrom } from "./impl-table.js";

export type NamedMode = "subclasses" | "exact" | "abstract";

export interface NamedType extends LazyImpl {
  readonly mode: NamedMode;
}

const prefixes: Readonly<Record<string, NamedMode>> = { "~": "subclasses", "=": "exact", "@": "abstract" };

/** The named type a text stands for, or undefined when the text is not one. */
export function parseNamedType(text: string): NamedType | undefined {
  const mode = prefixes[text[0] ?? ""];
  const parsed = parseLazyImpl(mode === undefined ? text : text.slice(1));
  // A specifier with blanks at either end names no module: a typo, refused like one.
  if (parsed === undefined || /^[~=@\s]|\s$/.test(parsed.specifier) || !/^[A-Za-z_$][\w$]*$/.test(parsed.exportName)) return undefined;
  return { ...parsed, mode: mode ?? "subclasses", label: text };
}

/**
 * A TypeScript file's text as Node runs it: its types stripped (or transformed, under
 * --experimental-transform-types) by module.stripTypeScriptTypes, as Node's own loader does; undefined
 * where Node runs no TypeScript (Node 20, or 22 without the flag) or cannot strip this text. The
 * function's ExperimentalWarning is Node's note to whoever calls it, not the app's: it is not shown.
 */
function asNodeRuns(source: string): string | undefined {
  const mode = (process.features as { typescript?: unknown }).typescript;
  const strip = (nodeModule as { stripTypeScriptTypes?: (code: string, options: { mode: string }) => string }).stripTypeScriptTypes;
  if ((mode !== "strip" && mode !== "transform") || typeof strip !== "function") return undefined;
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: unknown } | undefined)?.type;
    if (type === "ExperimentalWarning" && String(warning).startsWith("stripTypeScriptTypes ")) return;
    return (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return strip(source, { mode });
  } catch {
    return undefined; // syntax it cannot strip: Node could not run this file either
  } finally {
    process.emitWarning = emit;
  }
}

/** Resolves named types against one directory (the declaring package's), remembering what it read. */
export class NamedTypeResolver {
  readonly #base: string;
  readonly #paths = new Map<string, string | null>();
  readonly #sources = new Map<string, readonly string[]>();

  constructor(base: string) {
    this.#base = base;
  }

  /** The file a specifier names, or null when it does not resolve. */
  #file(specifier: string): string | null {
    let file = this.#paths.get(specifier);
    if (file === undefined) {
      try {
        file = specifier.startsWith(".")
          ? path.resolve(this.#base, specifier)
          : nodeModule.createRequire(path.join(this.#base, "noop.js")).resolve(specifier);
      } catch {
        file = null;
      }
      this.#paths.set(specifier, file);
    }
    return file;
  }

  /** Whether `type` (a class met in a value's prototype chain) is the named type. */
  is(named: NamedType, type: Function): boolean {
    if (type.name !== named.exportName) return false;
    const file = this.#file(named.specifier);
    if (file === null) return false;
    const cached = nodeModule.createRequire(file).cache?.[file];
    if (cached !== undefined && (cached.exports as Record<string, unknown> | undefined)?.[named.exportName] === type) return true;
    let sources = this.#sources.get(file);
    if (sources === undefined) {
      try {
        const raw = fs.readFileSync(file, "utf8");
        const stripped = /\.[cm]?ts$/.test(file) ? asNodeRuns(raw) : undefined;
        sources = stripped === undefined ? [raw] : [stripped, raw];
      } catch {
        sources = [];
      }
      this.#sources.set(file, sources);
    }
    const text = Function.prototype.toString.call(type);
    return !text.endsWith("{ [native code] }") && sources.some((source) => source.includes(text));
  }

  /** An abstract type's export, loaded now with require(): a class, or an object with Symbol.hasInstance. */
  load(named: NamedType, where: string): { [Symbol.hasInstance](value: unknown): boolean } {
    const fail = (why: string, cause?: unknown) =>
      new DispatchHookError("ERR_DISPATCH_TYPE_LOAD", `${where} names the abstract type ${JSON.stringify(named.label)}, but ${why}.`, {
        cause,
        details: { type: named.label },
      });
    const exported = requireFrom(this.#base, named.specifier, fail)[named.exportName];
    const ask = (exported as { [Symbol.hasInstance]?: unknown } | null | undefined)?.[Symbol.hasInstance];
    if ((typeof exported !== "function" && typeof exported !== "object") || exported === null || typeof ask !== "function") {
      throw fail(`its export ${JSON.stringify(named.exportName)} is ${describe(exported)}, which instanceof cannot ask`);
    }
    return exported as { [Symbol.hasInstance](value: unknown): boolean };
  }
}
