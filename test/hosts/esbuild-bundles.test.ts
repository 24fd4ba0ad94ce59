import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { dispatchHook } from "../../src/adapters/esbuild.js";
import { frameworkTree } from "./trees.js";

async function bundle(root: string, plugins: ReturnType<typeof dispatchHook>[]) {
  writeFileSync(join(root, "main.js"), 'import { cpuTable } from "tensorkit/backends/cpu/table.js";\nconsole.log(cpuTable);\n');
  const result = await build({
    entryPoints: [join(root, "main.js")],
    absWorkingDir: root,
    bundle: true,
    write: false,
    platform: "node",
    format: "esm",
    sourcemap: "external",
    outdir: join(root, "out"),
    logLevel: "silent",
    plugins,
  });
  const text = (suffix: string) => result.outputFiles.find((f) => f.path.endsWith(suffix))?.text ?? "";
  return { code: text(".js"), map: text(".js.map") };
}

describe("dispatch-hook/esbuild", () => {
  it("bundles the facade: the original once, the step marker, the registration module, with the original in the source map", async () => {
    const { root } = frameworkTree({ "node_modules/kit-ops/reg/cpu.js": 'console.log("kit-ops registers");\n' });
    const { code, map } = await bundle(root, [dispatchHook()]);
    expect(code.match(/cpuTable = (\/\* @__PURE__ \*\/ )?new Map\(\)/g)).toHaveLength(1);
    expect(code).toContain("signalEvaluated(");
    expect(code).toMatch(/step\(\s*\{\s*"?url"?:/);
    expect(code).toContain("kit-ops registers");
    expect(code).toMatch(/"name":\s*"dispatch-hook\/esbuild"/);
    // The original's lines map to the original file, not to a generated one.
    expect(JSON.parse(map).sources.some((s: string) => s.endsWith("tensorkit/backends/cpu/table.js"))).toBe(true);
  });

  it("leaves a bundle alone when nothing is declared", async () => {
    const { root } = frameworkTree();
    const { code } = await bundle(root, [dispatchHook({ discover: false })]);
    const without = await bundle(root, []);
    // The very bundle esbuild makes without the plugin: the table, once, and nothing of ours.
    expect(code).toBe(without.code);
    expect(code.match(/cpuTable = (\/\* @__PURE__ \*\/ )?new Map\(\)/g)).toHaveLength(1);
    expect(code).not.toContain("signalEvaluated(");
  });
});
