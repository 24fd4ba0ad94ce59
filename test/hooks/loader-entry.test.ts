import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { install } from "../../src/hooks/install.js";
import * as entry from "../../src/hooks/loader-entry.js";

describe("the loader's entry", () => {
  it("is install() and nothing else: the main entry arms the exit audit, only when the environment asks", () => {
    expect(Object.keys(entry)).toEqual(["install"]);
    expect(entry.install).toBe(install);
    const loader = readFileSync(new URL("../../loader.mjs", import.meta.url), "utf8");
    expect(loader).toContain('import { install } from "./dist/bundle/install.js";');
    expect(loader).toContain("install({ registry });");
    expect(loader).not.toContain("auditAtExit");
    const main = readFileSync(new URL("../../src/default-registry.ts", import.meta.url), "utf8");
    expect(main).toMatch(/\nauditFromEnvironment\(\);\n/);
    const arming = readFileSync(new URL("../../src/registry/exit-audit.ts", import.meta.url), "utf8");
    expect(arming).toMatch(/if \(mode \|\| dir\) auditAtExit\(/);
  });
});
