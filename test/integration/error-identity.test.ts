/**
 * One error identity: an error any part of dispatch-hook throws is an instance of the
 * DispatchHookError of every entry and every installed copy. Before, an error thrown by install()
 * from dispatch-hook/hooks was not an instance of the class exported by dispatch-hook, and the
 * CommonJS entry's errors (what require() loads on Node 20.16) failed instanceof both ways.
 */
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lastJson, makeTree, repoRoot, run } from "./fixture.js";

const script = [
  'import { createRequire } from "node:module";',
  'import { createRegistry, DispatchHookError } from "dispatch-hook";',
  'import { install } from "dispatch-hook/hooks";',
  "const require = createRequire(import.meta.url);",
  // The CommonJS entry itself, whatever require() of the package name picks on this Node.
  'const cjs = require("./node_modules/dispatch-hook/dist/bundle/index.cjs");',
  'const copy = await import("./node_modules/other/node_modules/dispatch-hook/dist/bundle/index.js");',
  "const caught = (fn) => { try { fn(); } catch (error) { return error; } throw new Error('did not throw'); };",
  'const fromHooks = caught(() => install({ mode: "nope" }));',
  "const fromEsm = caught(() => createRegistry({ bogus: 1 }));",
  "const fromCjs = caught(() => cjs.createRegistry({ bogus: 1 }));",
  "const fromCopy = caught(() => copy.createRegistry({ bogus: 1 }));",
  "const classes = { esm: DispatchHookError, cjs: cjs.DispatchHookError, copy: copy.DispatchHookError };",
  "const errors = { hooks: fromHooks, esm: fromEsm, cjs: fromCjs, copy: fromCopy };",
  "const matrix = {};",
  "for (const [e, error] of Object.entries(errors)) for (const [c, Class] of Object.entries(classes)) matrix[`${e} instanceof ${c}`] = error instanceof Class;",
  "console.log(JSON.stringify({",
  "  distinctClasses: new Set(Object.values(classes)).size,",
  "  matrix,",
  "  codes: Object.values(errors).map((e) => e.code),",
  "  strangers: [new Error('x'), { code: 'ERR_DISPATCH_CONFLICT' }, null].some((v) => v instanceof DispatchHookError),",
  "}));",
  "",
].join("\n");

describe("one error identity", () => {
  it("errors of the hooks entry, the CommonJS entry and another installed copy are instances of every copy's DispatchHookError", async () => {
    const dir = makeTree({
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/other/package.json": JSON.stringify({ name: "other", version: "1.0.0" }),
      "package.json": JSON.stringify({ name: "app", type: "module" }),
      "main.mjs": script,
    });
    // A second, real copy of the package (its built files and package.json), as a plugin's own dependency.
    const copy = join(dir, "node_modules/other/node_modules/dispatch-hook");
    mkdirSync(copy, { recursive: true });
    cpSync(join(repoRoot, "dist/bundle"), join(copy, "dist/bundle"), { recursive: true });
    cpSync(join(repoRoot, "package.json"), join(copy, "package.json"));
    const result = await run(dir, ["main.mjs"]);
    expect(result.stderr).toBe("");
    const out = lastJson(result.stdout) as {
      distinctClasses: number;
      matrix: Record<string, boolean>;
      codes: string[];
      strangers: boolean;
    };
    expect(out.distinctClasses).toBe(3);
    expect(Object.entries(out.matrix).filter(([, holds]) => !holds)).toEqual([]);
    expect(Object.keys(out.matrix)).toHaveLength(12);
    expect(out.codes).toEqual(Array(4).fill("ERR_DISPATCH_INVALID_OPTION"));
    expect(out.strangers).toBe(false);
  });
});
