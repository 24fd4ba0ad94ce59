import { parse } from "acorn";
import { describe, expect, it } from "vitest";
import { originalSource } from "../../src/hooks/instrument.js";

const originalHref = "file:///app/node_modules/tensorlab/link/numba.js?copy=2";

function parsesModule(code: string): void {
  parse(code, { ecmaVersion: "latest", sourceType: "module" });
}

/** The lines of `out` that come from `source`'s lines (`source` ends with a newline). */
function bodyLines(out: string, source: string): string[] {
  return out.split("\n").slice(0, source.split("\n").length - 1);
}

describe("originalSource (an ES original served at its second URL)", () => {
  it("replaces every import.meta with a call of the same length: every line and column stays where it was", () => {
    const source = [
      "export const a = import.meta.url, b = import . meta.filename;",
      'const s = "import.meta"; // import.meta',
      "/* import.meta */ export const r = String(import.meta.resolve('./x.js'));",
      "export function later() { return new URL('./y.js', import.meta.url); }",
      "",
    ].join("\n");
    const out = originalSource(source, originalHref);
    const lines = bodyLines(out, source);
    expect(lines).toEqual([
      "export const a = _dhMeta0$().url, b = _dhMeta0$()  .filename;",
      'const s = "import.meta"; // import.meta',
      "/* import.meta */ export const r = String(_dhMeta0$().resolve('./x.js'));",
      "export function later() { return new URL('./y.js', _dhMeta0$().url); }",
    ]);
    bodyLines(source, source).forEach((line, i) => {
      expect(lines[i]).toHaveLength(line.length);
    });
    parsesModule(out);
  });

  it("answers with the module's own URL, from its first line on, and leaves the rest of import.meta alone", () => {
    const source = "export const early = hoisted();\nfunction hoisted() { return import.meta; }\n";
    const out = originalSource(source, originalHref);
    const declaration = out.split("\n")[2] as string;
    expect(declaration).toBe(
      `;function _dhMeta0$(){if(!_dhMeta0$.d){_dhMeta0$.d=1;try{import.meta.url=${JSON.stringify(originalHref)}}catch{}}return import.meta}`,
    );
    // Run as Node would, import.meta being the object Node made for the second URL.
    const meta = { url: `${originalHref}&dispatch-hook-original`, filename: "/app/node_modules/tensorlab/link/numba.js" };
    const call = new Function("meta", `${declaration.slice(1).replaceAll("import.meta", "meta")}; return _dhMeta0$;`)(meta);
    expect(call()).toBe(meta);
    expect(meta).toEqual({ url: originalHref, filename: "/app/node_modules/tensorlab/link/numba.js" });
  });

  it("names a function that occurs nowhere in the source", () => {
    const source = "const _dhMeta0$ = 1, _dhMeta1$ = 2;\nexport default import.meta.url;\n";
    const out = originalSource(source, originalHref);
    expect(bodyLines(out, source)[1]).toBe("export default _dhMeta2$().url;");
    parsesModule(out);
  });

  it("leaves an import.meta written across lines as it is, and a module the lexer cannot read", () => {
    const across = "export const a = import\n.meta.url;\n";
    expect(bodyLines(originalSource(across, originalHref), across)).toEqual(bodyLines(across, across));
    const broken = "export const a = import.meta.url; {{{\n";
    expect(originalSource(broken, originalHref).startsWith(broken)).toBe(true);
  });

  it("names the module's own URL in a sourceURL comment, before the source map comment, unless it names one itself", () => {
    const source = "export const a = 1;\n//# sourceMappingURL=numba.js.map";
    const out = originalSource(source, originalHref);
    expect(out.startsWith(source)).toBe(true);
    expect(out.trimEnd().split("\n").slice(-2)).toEqual([`//# sourceURL=${originalHref}`, "//# sourceMappingURL=numba.js.map"]);
    const named = "export const a = 1;\n//# sourceURL=webpack://numba.js\n";
    expect(originalSource(named, originalHref)).toBe(named);
  });
});
