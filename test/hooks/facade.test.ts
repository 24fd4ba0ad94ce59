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
  it("re-exports the original, then imports the signal and each plugin between its markers", () => {
    expect(facadeSource(base).trim().split("\n")).toEqual([
      'export * from "file:///fw/cpu.js";',
      'import "virtual:evaluated";',
      'import "virtual:begin0";',
      'import "file:///kit/cpu.js";',
      'import "virtual:end0";',
      'import "virtual:missing1";',
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
    const noop =
      "data:text/javascript,export const signalEvaluated = () => globalThis.__order.push('signal'); export const openWindow = () => ({ close() {} });";
    const input: FacadeInput = {
      module: { url: url("cpu.mjs"), backend: "cpu", exportName: "cpuTable", format: "module" },
      original: url("cpu.mjs"),
      runtime: noop,
      hasDefault: true,
      registrations: [{ plugin: "p", url: url("reg.mjs"), specifier: url("reg.mjs") }],
      marker: (kind, index) => url(`${kind}${index ?? ""}.mjs`),
    };
    writeFileSync(join(dir, "facade.mjs"), facadeSource(input));
    for (const kind of ["evaluated", "begin", "end"] as const)
      writeFileSync(join(dir, `${kind}${kind === "evaluated" ? "" : 0}.mjs`), markerSource(kind, 0, input));
    const ns = await import(url("facade.mjs"));
    expect(ns.default).toBe("fw");
    expect((globalThis as Record<string, unknown>).__order).toEqual(["body", "signal", "reg saw true"]);
    delete (globalThis as Record<string, unknown>).__order;
  });
});

describe("markerSource", () => {
  it("hands the runtime the namespace, or a CommonJS module's exports", () => {
    expect(markerSource("evaluated", 0, base)).toContain(
      'signalEvaluated({"url":"file:///fw/cpu.js","backend":"cpu","exportName":"cpuTable","format":"module"}, ns);',
    );
    const cjs = { ...base, module: { ...base.module, format: "commonjs" as const } };
    expect(markerSource("evaluated", 0, cjs)).toContain(", ns.default);");
    expect(markerSource("begin", 0, base)).toContain('"plugin":"kit-ops","module":"file:///kit/cpu.js"');
    expect(markerSource("end", 0, base)).toBe('import { window } from "virtual:begin0";\nwindow.close();\n');
    expect(markerSource("missing", 1, base)).toContain('"Cannot find it"');
    expect(markerSource("require", 0, { ...base, requirePath: "/fw/cpu.js" })).toContain(
      'createRequire("file:///fw/cpu.js")("/fw/cpu.js")',
    );
  });

  it("refuses a registration index the plan does not have, with a code", () => {
    expect(thrown(() => markerSource("begin", 5, base)).code).toBe("ERR_DISPATCH_INVALID_OPTION");
  });
});
