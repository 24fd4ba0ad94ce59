import { describe, expect, it } from "vitest";
import { hasDefaultExport } from "../../src/hooks/export-names.js";

describe("hasDefaultExport", () => {
  it("tells exactly, whatever the word 'default' does elsewhere in the source", () => {
    expect(hasDefaultExport("export default 1;")).toEqual({ hasDefault: true, exact: true });
    expect(hasDefaultExport("const a = 1; export { a as default };")).toEqual({ hasDefault: true, exact: true });
    expect(hasDefaultExport('export { default } from "./x.js";')).toEqual({ hasDefault: true, exact: true });
    expect(
      hasDefaultExport("// export default 1\nconst s = 'export default'; switch (1) { default: } export const a = options.default;"),
    ).toEqual({
      hasDefault: false,
      exact: true,
    });
    // export * never re-exports a default.
    expect(hasDefaultExport('export * from "./x.js";')).toEqual({ hasDefault: false, exact: true });
  });

  it("guesses from the text when the source cannot be lexed, and says it guessed", () => {
    expect(hasDefaultExport("export default {{{")).toEqual({ hasDefault: true, exact: false });
    expect(hasDefaultExport("export const = (( // default")).toEqual({ hasDefault: false, exact: false });
    // Without the word anywhere, the lexer is not even loaded.
    expect(hasDefaultExport("export const = ((")).toEqual({ hasDefault: false, exact: true });
  });
});
