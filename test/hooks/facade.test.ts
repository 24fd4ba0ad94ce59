import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { type FacadeInput, facadeSource, markerSource } from "../../src/hooks/facade.js";
import { thrown } from "../helpers.js";
import { makeTree } from "../integration/fixture.js";

const base: FacadeInput = {
  module: { url: "file:///fw/cpu.js", backend: "cpu", exportName: "cpuTable", format: "module" },
  original: "file:///fw/cpu.js",
  runtime: "file:///dh/runtime.js",
  hasDefault: false,
  registrations: [
    { plugin: "kit-ops", url: "file:///kit/cpu.js", specifier: "file:///kit/cpu.js" },
    { plugin: "gone", url: "file:///gone/cpu.js", specifier: "file:///gone/cpu.js", missing: "Cannot find it" },
  ],
  marker: (kind, index) => `virtual:${kind}${index ?? ""}`,
};

describe("facadeSource", () => {
  it("re-exports the original, then imports a step before each plugin, and closes the last window in its body", () => {
    expect(facadeSource(base).trim().split("\n")).toEqual([
      'export * from "file:///fw/cpu.js";',
      'import "virtual:step0";',
      'import "file:///kit/cpu.js";',
      'import { window as __dispatchHookLast } from "virtual:step1";',
      "__dispatchHookLast.close();",
    ]);
    // With no plugin, the facade announces the table from its own body: one generated module.
    expect(
      facadeSource({ ...base, registrations: [] })
        .trim()
        .split("\n"),
    ).toEqual([
      'export * from "file:///fw/cpu.js";',
      'import * as __dispatchHookNs from "file:///fw/cpu.js";',
      'import { signalEvaluated } from "file:///dh/runtime.js";',
      'signalEvaluated({"url":"file:///fw/cpu.js","backend":"cpu","exportName":"cpuTable","format":"module"}, __dispatchHookNs);',
    ]);
    expect(facadeSource({ ...base, hasDefault: true })).toContain('export { default } from "file:///fw/cpu.js";');
    const cjs = facadeSource({ ...base, module: { ...base.module, format: "commonjs" }, hasDefault: true, requirePath: "/fw/cpu.js" });
    expect(cjs.split("\n")[0]).toBe('import "virtual:require";');
  });

  it("runs: registration modules evaluate after the original's body, and read its bindings", async () => {
    const dir = makeTree({
      "cpu.mjs": 'export const cpuTable = new Map();\nexport default "fw";\nglobalThis.__order = ["body"];\n',
      "reg.mjs": 'import { cpuTable } from "./facade.mjs";\nglobalThis.__order.push("reg saw " + (cpuTable instanceof Map));\n',
    });
    const url = (f: string) => pathToFileURL(join(dir, f)).href;
    const runtime =
      "data:text/javascript,export const signalEvaluated = () => globalThis.__order.push('signal'); export const openWindow = () => ({ close() { globalThis.__order.push('close'); } }); export const missingRegistration = () => {};";
    const input: FacadeInput = {
      module: { url: url("cpu.mjs"), backend: "cpu", exportName: "cpuTable", format: "module" },
      original: url("cpu.mjs"),
      runtime,
      hasDefault: true,
      registrations: [{ plugin: "p", url: url("reg.mjs"), specifier: url("reg.mjs") }],
      marker: (kind, index) => url(`${kind}${index ?? ""}.mjs`),
    };
    writeFileSync(join(dir, "facade.mjs"), facadeSource(input));
    writeFileSync(join(dir, "step0.mjs"), markerSource("step", 0, input));
    const ns = await import(url("facade.mjs"));
    expect(ns.default).toBe("fw");
    expect((globalThis as Record<string, unknown>).__order).toEqual(["body", "signal", "reg saw true", "close"]);
    delete (globalThis as Record<string, unknown>).__order;
  });
});

describe("markerSource", () => {
  it("step 0 announces the table and opens the first window; a later step closes the one before", () => {
    const first = markerSource("step", 0, base);
    expect(first).toContain('signalEvaluated({"url":"file:///fw/cpu.js","backend":"cpu","exportName":"cpuTable","format":"module"}, ns);');
    expect(first).toContain('export const window = openWindow({"id":"file:///fw/cpu.js file:///kit/cpu.js"');
    const second = markerSource("step", 1, base);
    expect(second).not.toContain("signalEvaluated(");
    expect(second).toContain('import { window as previous } from "virtual:step0";\nprevious.close();');
    // Registration module 1 is missing: recorded, and its window closes as a no-op.
    expect(second).toContain('"Cannot find it"');
    expect(second).toContain("export const window = { close() {} };");
  });

  it("hands the runtime a CommonJS module's exports, and requires a CommonJS original first", () => {
    const cjs = { ...base, module: { ...base.module, format: "commonjs" as const } };
    expect(markerSource("step", 0, cjs)).toContain(", ns.default);");
    expect(markerSource("require", 0, { ...base, requirePath: "/fw/cpu.js" })).toContain(
      'createRequire("file:///fw/cpu.js")("/fw/cpu.js")',
    );
  });

  it("refuses a registration index the plan does not have, with a code", () => {
    expect(thrown(() => markerSource("step", 5, base)).code).toBe("ERR_DISPATCH_INVALID_OPTION");
  });
});
