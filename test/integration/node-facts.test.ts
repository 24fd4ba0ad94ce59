/**
 * The Node facts the hook-mode choice rests on, checked against real binaries. The binary under
 * test always runs; `DISPATCH_HOOK_FACT_VERSIONS="22.22.2 22.22.3"` adds versions fetched with npx.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { makeTree, nodeBinary, nodeVersion } from "./fixture.js";

const dir = makeTree({
  "esm.mjs": "export const x = 1;\n",
  "main.cjs": 'const { x } = require("./esm.mjs");\nconsole.log("require(esm) ok", x);\n',
  "passthrough.mjs": [
    'import module from "node:module";',
    "module.registerHooks({ load: (url, context, nextLoad) => nextLoad(url, context) });",
  ].join("\n"),
});

function requireEsmUnderPassthrough(binary: string): "ok" | "broken" {
  try {
    const out = execFileSync(binary, ["--import", "./passthrough.mjs", "main.cjs"], { cwd: dir, encoding: "utf8", stdio: "pipe" });
    return out.includes("require(esm) ok") ? "ok" : "broken";
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr);
    if (stderr.includes("reading 'exports'")) return "broken";
    throw error;
  }
}

const binaries: Array<[string, string]> = [[nodeVersion, nodeBinary]];
for (const version of (process.env.DISPATCH_HOOK_FACT_VERSIONS ?? "").split(/\s+/).filter(Boolean)) {
  binaries.push([version, execFileSync("npx", ["-y", `node@${version}`, "-p", "process.execPath"], { encoding: "utf8" }).trim()]);
}

describe("Node facts", () => {
  for (const [version, binary] of binaries) {
    const mode = hookMode(version);
    // Node 20 and 24/26 before registerHooks are covered by test/loading/choosing-the-hook-api.test.ts; this checks the 22 line and every registerHooks version.
    it.skipIf(mode !== "registerHooks" && !version.startsWith("22."))(
      `Node ${version}: registerHooks is chosen only where a pass-through hook keeps require(esm) working (${mode})`,
      () => {
        const hasRegisterHooks =
          execFileSync(binary, ["-p", "typeof require('node:module').registerHooks"], { encoding: "utf8" }).trim() === "function";
        if (!hasRegisterHooks) {
          expect(mode).not.toBe("registerHooks");
          return;
        }
        const outcome = requireEsmUnderPassthrough(binary);
        if (mode === "registerHooks") expect(outcome).toBe("ok");
        // On 22.15 to 22.22.2 the pass-through hook is what breaks require(esm): the reason we use register there.
        else if (version.startsWith("22.")) expect(outcome).toBe("broken");
      },
    );
  }
});
