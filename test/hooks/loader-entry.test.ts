import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { install } from "../../src/hooks/install.js";
import * as entry from "../../src/hooks/loader-entry.js";

describe("the loader's entry", () => {
  it("is install() and nothing else: the exit audit is loaded only when asked for", () => {
    expect(Object.keys(entry)).toEqual(["install"]);
    expect(entry.install).toBe(install);
    const loader = readFileSync(new URL("../../loader.mjs", import.meta.url), "utf8");
    expect(loader).toContain('import { install } from "./dist/bundle/install.js";');
    expect(loader).toContain("install({ registry });");
    expect(loader).toMatch(
      /if \(mode \|\| file\) \{\n\s+const \{ auditAtExit, parseAuditMode \} = await import\("\.\/dist\/bundle\/audit\.js"\);/,
    );
  });
});
