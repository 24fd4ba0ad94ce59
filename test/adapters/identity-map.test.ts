import { SourceMap } from "node:module";
import { describe, expect, it } from "vitest";
import { identityMap } from "../../src/adapters/identity-map.js";

describe("identityMap", () => {
  it("maps where every line and every word starts onto itself, in the file it names", () => {
    const code = 'import { a } from "./a.js";\n\nexport function boom() {\n  throw new Error("boom " + a);\n}\n';
    const map = identityMap(code, "/app/table.js");
    expect(map.sources).toEqual(["/app/table.js"]);
    expect(map.sourcesContent).toEqual([code]);
    const decoded = new SourceMap({ ...map, file: "table.js", sourceRoot: "" });
    let checked = 0;
    code.split("\n").forEach((text, line) => {
      for (let column = 0; column < text.length; column++) {
        if (column > 0 && /\w/.test(text[column] as string) === /\w/.test(text[column - 1] as string)) continue;
        expect(decoded.findEntry(line, column)).toMatchObject({ originalLine: line, originalColumn: column });
        checked++;
      }
    });
    expect(checked).toBeGreaterThan(20);
    expect(String((decoded.findEntry(3, 8) as { originalSource: string }).originalSource)).toContain("/app/table.js");
  });
});
