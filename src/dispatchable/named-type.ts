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
 * read once, on the first value whose class has the name. In a TypeScript file that Node runs itself,
 * the class's text (its types stripped to blanks) is compared with the file as written (standsIn()). A module
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
  // A "#" past its first character ("./arrays.js#NpArray#x") is a second export name, never part of a module's name.
  if (parsed === undefined || /^[~=@\s]|\s$|.#/.test(parsed.specifier) || !/^[A-Za-z_$][\w$]*$/.test(parsed.exportName)) return undefined;
  return { ...parsed, mode: mode ?? "subclasses", label: text };
}

/**
 * Whether `text` (a class's source as V8 gives it) stands in `source`, the file as written. In a
 * TypeScript file Node runs itself, type stripping puts blanks of the same length where the types
 * were, so every other character of the class's text is the file's, at the same place: where the
 * text has a blank, the file may have anything. Under --experimental-transform-types, which rewrites
 * the file, it is compared with the file as module.stripTypeScriptTypes transforms it.
 */
function standsIn(source: string, text: string, typescript: boolean): boolean {
  if (source.includes(text)) return true;
  const head = /^class\s+[\w$]+/.exec(text)?.[0];
  if (!typescript || head === undefined) return false;
  if ((process.features as { typescript?: unknown }).typescript === "transform") {
    try {
      const transform = (nodeModule as { stripTypeScriptTypes?: (code: string, options: object) => string }).stripTypeScriptTypes;
      if (transform?.(source, { mode: "transform" }).includes(text) === true) return true;
    } catch {} // text it cannot transform: Node could not run the file either
  }
  for (let at = source.indexOf(head); at >= 0; at = source.indexOf(head, at + 1)) {
    let j = head.length;
    while (j < text.length && (/\s/.test(text[j] as string) || text[j] === source[at + j])) j++;
    if (j === text.length) return true;
  }
  return false;
}

/** Resolves named types against one directory (the declaring package's), remembering what it read. */
export class NamedTypeResolver {
  readonly #base: string;
  readonly #paths = new Map<string, string | null>();
  readonly #sources = new Map<string, string | null>();

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
    // A built-in module's class ("node:buffer#Buffer"): always loaded, and never a file.
    if (nodeModule.isBuiltin(file)) return (process.getBuiltinModule(file) as Record<string, unknown>)[named.exportName] === type;
    const cached = nodeModule.createRequire(file).cache?.[file];
    if (cached !== undefined && (cached.exports as Record<string, unknown> | undefined)?.[named.exportName] === type) return true;
    let source = this.#sources.get(file);
    if (source === undefined) {
      try {
        source = fs.readFileSync(file, "utf8");
      } catch {
        source = null;
      }
      this.#sources.set(file, source);
    }
    const text = Function.prototype.toString.call(type);
    return source !== null && !text.endsWith("{ [native code] }") && standsIn(source, text, /\.[cm]?ts$/.test(file));
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
