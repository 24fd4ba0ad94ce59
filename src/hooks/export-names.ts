/**
 * What es-module-lexer tells about an ES module: whether it has a default export (all a facade must
 * know: `export *` re-exports every other name), where it names `import.meta`, whether it wraps its
 * own file. Loaded with the first facade, so a process that loads no dispatch module never pays for it.
 */
import { nodeModule } from "../builtins.js";

interface Lexer {
  initSync(): void;
  parse(
    source: string,
  ): readonly [
    ReadonlyArray<{ readonly d: number; readonly s: number; readonly e: number; readonly n?: string | undefined }>,
    ReadonlyArray<{ readonly n: string | undefined }>,
    boolean,
    boolean,
  ];
}

let lexer: Lexer | undefined;

function load(): Lexer {
  if (lexer === undefined) {
    const loaded = nodeModule.createRequire(import.meta.url)("es-module-lexer") as Lexer;
    loaded.initSync();
    lexer = loaded;
  }
  return lexer;
}

/** The [start, end) offsets of every `import.meta` in an ES module's code (never in its strings or comments); throws if it cannot be lexed. */
export function importMetaSpans(source: string): Array<readonly [number, number]> {
  const [imports] = load().parse(source);
  // d === -2 marks import.meta.
  return imports.filter((i) => i.d === -2).map((i) => [i.s, i.e] as const);
}

/**
 * Whether a file of a package with no "type" is an ES module by its syntax, as Node (22+) reads it
 * (import or export statements, import.meta). Without "import" or "export" in it, no need to lex.
 */
export function hasModuleSyntax(source: string): boolean {
  if (!source.includes("import") && !source.includes("export")) return false;
  try {
    return load().parse(source)[3];
  } catch {
    return false;
  }
}

/** `true`/`false` from the lexer; when the source cannot be lexed, a conservative textual guess and `exact: false`. */
export function hasDefaultExport(source: string): { hasDefault: boolean; exact: boolean } {
  // Without the word anywhere there is no default export, and no need to load the lexer (it costs
  // milliseconds at start-up, and most dispatch modules only have named exports).
  if (!source.includes("default")) return { hasDefault: false, exact: true };
  try {
    const [, exports] = load().parse(source);
    return { hasDefault: exports.some((e) => e.n === "default"), exact: true };
  } catch {
    return { hasDefault: /\bexport\s+default\b|\bas\s+default\b/.test(source), exact: false };
  }
}

/**
 * Whether an ES module at a URL with a query imports its own file under another URL: another
 * loader's wrapper of that file (import-in-the-middle's `basic.js?iitm=true` imports `basic.js`).
 * A module the lexer cannot read is not one.
 */
export function wrapsOwnFile(source: string, href: string): boolean {
  const file = href.replace(/[?#].*$/, "");
  if (!source.includes(file.slice(file.lastIndexOf("/") + 1))) return false;
  try {
    const [imports] = load().parse(source);
    return imports.some((i) => {
      if (i.n === undefined) return false;
      const target = new URL(i.n, href).href;
      return target !== href && target.replace(/[?#].*$/, "") === file;
    });
  } catch {
    return false;
  }
}
