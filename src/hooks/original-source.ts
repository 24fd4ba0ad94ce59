/**
 * The source of an ES original served under its facade's second URL (`basic.js?dispatch-hook-original`,
 * see virtual-modules.ts), changed so that the module still sees its own URL. Node gives a module
 * the URL it was loaded under, so:
 *
 * - every `import.meta` becomes a call of the same length (`_dhMeta0$()`, padded with spaces where
 *   the expression was written longer), to a function declaration appended at the end. Declarations
 *   are hoisted, so it answers from the module's first line on: it sets `import.meta.url` to the
 *   module's own URL once, and returns `import.meta` itself, so its other members (`filename` and
 *   `dirname`, which Node derives without the query, `resolve`, `main`, anything a host added) are
 *   the module's. es-module-lexer finds the expressions, never in strings or comments. Every line
 *   and column stays where it was, so source maps and stack positions are unchanged.
 * - a `//# sourceURL=` comment names the module's own URL, so stack frames name it (Node 20 to 26
 *   find a `sourceMappingURL` map through it too), unless the module names a sourceURL of its own.
 *   `//# sourceMappingURL` stays last.
 *
 * A pure function of its arguments. A module the lexer cannot read keeps its `import.meta`; it
 * still gets the sourceURL.
 */
import { importMetaSpans } from "./export-names.js";
import { trailingDirectives } from "./instrument.js";

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

export function originalSource(source: string, href: string): string {
  const { code, declaration } = rewriteImportMeta(source, href);
  const lines = declaration === undefined ? [] : [declaration];
  if (!/^[ \t]*\/\/[#@][ \t]*sourceURL=/m.test(source) && !/[\n\r\u2028\u2029]/.test(href)) lines.push(`//# sourceURL=${href}`);
  if (lines.length === 0) return code;
  const separator = code.length === 0 || code.endsWith("\n") ? "" : "\n";
  // Appended after the last line, and the trailing source map comments repeated: they stay last.
  return `${code}${separator}${lines.join("\n")}\n${trailingDirectives(source)}`;
}
