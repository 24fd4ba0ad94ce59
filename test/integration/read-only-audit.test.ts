/**
 * No user code can turn a miss into ok. A program whose registration failed tries every way at hand
 * to make its audit say otherwise: it assigns another object to `registry.audit`, replaces
 * `events` on the log, and edits the report it was given. verify(), threadAudit(), assertComplete()
 * and the strict exit audit all still name the failure. Before, the first alone made all of them
 * say ok.
 */
import { describe, expect, it } from "vitest";
import { lastJson, loader, makeTree, run } from "./fixture.js";
import { frameworkEsm, plugin } from "./trees.js";

const forger = [
  'import { registry, threadAudit } from "dispatch-hook";',
  'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
  "const attempts = {};",
  'const attempt = (name, fn) => { try { fn(); attempts[name] = "allowed"; } catch (error) { attempts[name] = error.constructor.name; } };',
  "const ok = { ok: true, checked: 1, registrations: [], outside: [], plugins: [], backends: [], problems: [], notes: [] };",
  'attempt("assign audit", () => { registry.audit = { verify: () => ok, events: () => [], assertComplete() {} }; });',
  'attempt("define audit", () => Object.defineProperty(registry, "audit", { value: { verify: () => ok } }));',
  'attempt("replace events", () => { registry.audit.events = () => []; });',
  "const report = registry.verify();",
  'attempt("edit report", () => { report.problems.length = 0; });',
  'attempt("edit verdict", () => { report.ok = true; });',
  'let asserted = "passed";',
  "try { registry.assertComplete(); } catch (error) { asserted = error.code; }",
  "console.log(JSON.stringify({ attempts, verify: registry.verify().ok, thread: threadAudit().ok, asserted, kinds: registry.verify().problems.map((p) => p.kind) }));",
  "",
].join("\n");

describe("a read-only audit", () => {
  it("user code cannot make a failed registration look landed", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      // A table that refuses every registration.
      "node_modules/tensorlab/link/numba/dispatch/basic.js":
        'export const numbaFuncify = { register() { throw new Error("frozen table"); } };\n',
      "forger.mjs": `import "ml-ops/register-now.js";\n${forger}`,
    });
    const result = await run(dir, ["--import", loader, "forger.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    const out = lastJson(result.stdout);
    expect(out.attempts).toEqual({
      "assign audit": "TypeError",
      "define audit": "TypeError",
      "replace events": "TypeError",
      "edit report": "TypeError",
      "edit verdict": "TypeError",
    });
    expect(out).toMatchObject({ verify: false, thread: false, asserted: "ERR_DISPATCH_INCOMPLETE", kinds: ["failed"] });
    expect(result.stderr).toContain("dispatch-hook audit (strict):");
    expect(result.stderr).toContain("frozen table");
    expect(result.code).toBe(1);
  });
});
