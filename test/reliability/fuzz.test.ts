// The transforms under random input: arbitrary text and URLs, and generated modules that run.
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse } from "acorn";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasDefaultExport } from "../../src/hooks/export-names.js";
import { cjsFacadeSource, type FacadeInput, facadeSource, markerSource } from "../../src/hooks/facade.js";
import { runtimeLocation } from "../../src/hooks/hook-api.js";
import { instrument } from "../../src/hooks/instrument.js";
import { makeTree } from "../integration/fixture.js";

const hostile = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom('"', "'", "`", "\n", "\r\n", "\u2028", "*/", "/*", "</script>", "${", "\\", "\0", "😀", "ü"),
);
const text = fc.array(hostile, { maxLength: 8 }).map((parts) => parts.join(""));
const url = text.map((t) => `file:///fuzz/${t}.js`);
const registration = fc.record({ plugin: text, url });
const epilogue = fc.record({
  module: fc.record({
    url,
    backend: text.filter((t) => t.length > 0),
    exportName: text.filter((t) => t.length > 0),
    format: fc.constant("commonjs" as const),
  }),
  registrations: fc.array(registration, { maxLength: 3 }),
  runtime: text,
});
const facade = fc.record({
  module: fc.record({ url, backend: text, exportName: text, format: fc.constantFrom("module" as const, "commonjs" as const) }),
  original: url,
  runtime: url,
  hasDefault: fc.boolean(),
  registrations: fc.array(fc.record({ plugin: text, url, specifier: url, missing: fc.option(text, { nil: undefined }) }), { maxLength: 3 }),
  requirePath: fc.option(text, { nil: undefined }),
});
const toInput = (f: typeof facade extends fc.Arbitrary<infer T> ? T : never): FacadeInput => {
  const { requirePath, ...rest } = f;
  return {
    ...rest,
    registrations: f.registrations.map((r) =>
      r.missing === undefined ? { plugin: r.plugin, url: r.url, specifier: r.specifier } : r,
    ) as FacadeInput["registrations"],
    ...(requirePath === undefined ? {} : { requirePath }),
    marker: (kind, index) => `virtual:${kind}${index ?? ""}`,
  };
};

function parsesAs(code: string, kind: "module" | "commonjs"): void {
  if (kind === "module") parse(code, { ecmaVersion: "latest", sourceType: "module" });
  else parse(`(function (exports, require, module, __filename, __dirname) {${code}\n})`, { ecmaVersion: "latest", sourceType: "script" });
}

describe("instrument() fuzzed", () => {
  it("keeps any source as an exact prefix and appends a single line (plus repeated directives)", () => {
    fc.assert(
      fc.property(text, epilogue, (source, input) => {
        const out = instrument(source, input);
        expect(out.startsWith(source)).toBe(true);
        const added = out
          .slice(source.length)
          .replace(/^\n/, "")
          .split("\n")
          .filter((line) => line !== "");
        expect(added[0]?.startsWith(";")).toBe(true);
        for (const line of added.slice(1)) expect(line).toMatch(/^\/\/[#@]\s*source(Mapping)?URL=/);
      }),
      { numRuns: 500 },
    );
  });

  it("turns any empty or valid CommonJS module into a valid one, whatever the URL and plan", () => {
    fc.assert(
      fc.property(epilogue, fc.constantFrom("", "// only a comment", "/* block */", "x = 1", '"use strict";\n'), (input, source) => {
        parsesAs(instrument(source, input), "commonjs");
      }),
      { numRuns: 300 },
    );
  });
});

describe("facadeSource() and markerSource() fuzzed", () => {
  it("always generate valid ES modules, whatever the URLs, names and plugins", () => {
    fc.assert(
      fc.property(facade, (f) => {
        const input = toInput(f);
        parsesAs(facadeSource(input), "module");
        parsesAs(markerSource("require", 0, input), "module");
        for (let i = 0; i < input.registrations.length; i++) parsesAs(markerSource("step", i, input), "module");
        parsesAs(cjsFacadeSource(input), "commonjs");
      }),
      { numRuns: 400 },
    );
  });
});

// ---- generated modules that run ---------------------------------------------------------------

const identifier = fc
  .stringMatching(/^[a-z][a-zA-Z0-9]{0,8}$/)
  .filter(
    (s) =>
      ![
        "do",
        "if",
        "in",
        "for",
        "let",
        "new",
        "try",
        "var",
        "case",
        "else",
        "enum",
        "null",
        "this",
        "true",
        "void",
        "with",
        "await",
        "break",
        "catch",
        "class",
        "const",
        "false",
        "super",
        "throw",
        "while",
        "yield",
        "delete",
        "export",
        "import",
        "public",
        "return",
        "static",
        "switch",
        "typeof",
        "default",
        "extends",
        "finally",
        "package",
        "private",
        "continue",
        "debugger",
        "function",
        "eval",
        "arguments",
        "interface",
        "protected",
        "implements",
        "instanceof",
        "module",
        "exports",
        "require",
      ].includes(s),
  );
const literal = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 12 }),
  fc.boolean(),
  fc.constant(null),
);
const newline = fc.constantFrom("\n", "\r\n");
const filler = fc.constantFrom(
  "",
  "// a comment",
  "/* a block\n comment */",
  "const __dh0 = 1;",
  "//# sourceMappingURL=data:application/json;base64,eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbXSwibmFtZXMiOltdLCJtYXBwaW5ncyI6IiJ9",
);

const program = fc.record({
  exports: fc.uniqueArray(fc.tuple(identifier, literal, fc.constantFrom("const", "let", "function")), {
    selector: ([name]) => name,
    maxLength: 6,
  }),
  withDefault: fc.option(literal, { nil: undefined }),
  filler: fc.uniqueArray(filler, { maxLength: 3 }),
  newline,
  trailingNewline: fc.boolean(),
});

type Program = {
  exports: Array<[string, unknown, string]>;
  withDefault: unknown;
  filler: string[];
  newline: string;
  trailingNewline: boolean;
};

/** Lines joined by the chosen newline; the last line (often a comment) may lack one. */
function esmSource(p: Program): string {
  const lines = p.exports.map(([name, value, kind]) =>
    kind === "function"
      ? `export function ${name}() { return ${JSON.stringify(value)}; }`
      : `export ${kind} ${name} = ${JSON.stringify(value)};`,
  );
  if (p.withDefault !== undefined) lines.push(`export default ${JSON.stringify(p.withDefault)};`);
  lines.push(...p.filler);
  return `${lines.join(p.newline)}${p.trailingNewline ? p.newline : ""}`;
}

function cjsSource(p: Program): string {
  const lines = p.exports.map(([name, value]) => `exports.${name} = ${JSON.stringify(value)};`);
  lines.push(...p.filler);
  return `${lines.join(p.newline)}${p.trailingNewline ? p.newline : ""}`;
}

function snapshot(namespace: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(namespace)
      .sort()
      .map((key) => {
        const value = namespace[key];
        return [key, typeof value === "function" ? `function:${(value as () => unknown)()}` : value];
      }),
  );
}

describe("generated modules run with identical exports", () => {
  const dir = makeTree({});
  let n = 0;

  it("ES modules behind a facade", async () => {
    const runtime =
      "data:text/javascript,export const signalEvaluated = () => {}; export const openWindow = () => ({ close() {} }); export const missingRegistration = () => {};";
    await fc.assert(
      fc.asyncProperty(program, async (p) => {
        const source = esmSource(p as Program);
        const id = n++;
        const plainFile = join(dir, `plain${id}.mjs`);
        const facadeFile = join(dir, `facade${id}.mjs`);
        const plainUrl = pathToFileURL(plainFile).href;
        writeFileSync(plainFile, source);
        const generated = facadeSource({
          module: { url: plainUrl, backend: "fuzz", exportName: "x", format: "module" },
          original: plainUrl,
          runtime,
          hasDefault: hasDefaultExport(source).hasDefault,
          registrations: [],
          marker: () => "data:text/javascript,",
        });
        writeFileSync(facadeFile, generated);
        const plain = await import(plainUrl);
        const behind = await import(pathToFileURL(facadeFile).href);
        expect(snapshot(behind)).toEqual(snapshot(plain));
      }),
      { numRuns: 150 },
    );
  });

  it("CommonJS modules", () => {
    const require = createRequire(import.meta.url);
    fc.assert(
      fc.property(program, (p) => {
        const source = cjsSource(p as Program);
        const id = n++;
        const plainFile = join(dir, `plain${id}.cjs`);
        const hookedFile = join(dir, `hooked${id}.cjs`);
        writeFileSync(plainFile, source);
        const instrumented = instrument(source, {
          module: { url: pathToFileURL(hookedFile).href, backend: "fuzz", exportName: "x", format: "commonjs" },
          registrations: [],
          runtime: runtimeLocation().cjs,
        });
        parsesAs(instrumented, "commonjs");
        writeFileSync(hookedFile, instrumented);
        expect(snapshot(require(hookedFile))).toEqual(snapshot(require(plainFile)));
      }),
      { numRuns: 150 },
    );
  });
});
