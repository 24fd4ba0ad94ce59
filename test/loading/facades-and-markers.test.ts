import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { hasDefaultExport } from "../../src/hooks/export-names.js";
import { type FacadeInput, facadeSource, markerSource, windowInfo } from "../../src/hooks/facade.js";
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
  it("re-exports the original, then a step and an early marker before each plugin and a done marker after it, and a last step and early marker", () => {
    expect(facadeSource(base).trim().split("\n")).toEqual([
      'export * from "file:///fw/cpu.js";',
      'import "virtual:step0";',
      'import "virtual:early0";',
      'import "file:///kit/cpu.js";',
      'import "virtual:done0";',
      'import "virtual:step1";',
      'import "virtual:step2";',
      'import "virtual:early2";',
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

  it("runs: registration modules evaluate after the original's body, read its bindings, and a done marker waits for a top-level await", async () => {
    const dir = makeTree({
      "cpu.mjs": 'export const cpuTable = new Map();\nexport default "fw";\nglobalThis.__order = ["body"];\n',
      "reg.mjs":
        'import { cpuTable } from "./facade.mjs";\nglobalThis.__order.push("reg saw " + (cpuTable instanceof Map));\nawait null;\nglobalThis.__order.push("reg resumed");\n',
    });
    const url = (f: string) => pathToFileURL(join(dir, f)).href;
    const runtime =
      "data:text/javascript,export const step = (m, ns, w, i) => globalThis.__order.push('step ' + i); export const early = (m, w, i) => globalThis.__order.push('early ' + i); export const finish = () => globalThis.__order.push('done');";
    const input: FacadeInput = {
      module: { url: url("cpu.mjs"), backend: "cpu", exportName: "cpuTable", format: "module" },
      original: url("cpu.mjs"),
      runtime,
      hasDefault: true,
      registrations: [{ plugin: "p", url: url("reg.mjs"), specifier: url("reg.mjs") }],
      marker: (kind, index) => url(`${kind}${index ?? ""}.mjs`),
    };
    writeFileSync(join(dir, "facade.mjs"), facadeSource(input));
    for (const [kind, index] of [
      ["step", 0],
      ["early", 0],
      ["done", 0],
      ["step", 1],
      ["early", 1],
    ] as const)
      writeFileSync(join(dir, `${kind}${index}.mjs`), markerSource(kind, index, input));
    const ns = await import(url("facade.mjs"));
    expect(ns.default).toBe("fw");
    // Done follows the registration module's await. (Where the last step falls depends on the
    // import cycle through the facade: V8 finishes the cycle first.)
    const order = (globalThis as Record<string, unknown>).__order as string[];
    expect(order.filter((e) => e !== "step 1" && e !== "early 1")).toEqual([
      "body",
      "step 0",
      "early 0",
      "reg saw true",
      "reg resumed",
      "done",
    ]);
    expect(order).toContain("step 1");
    delete (globalThis as Record<string, unknown>).__order;
  });
});

describe("markerSource", () => {
  it("a step hands the runtime the module, its namespace, the windows and its index; a done marker imports its registration module", () => {
    const first = markerSource("step", 0, base);
    expect(first).toContain(
      'step({"url":"file:///fw/cpu.js","backend":"cpu","exportName":"cpuTable","format":"module"}, ns, [{"id":"file:///fw/cpu.js file:///kit/cpu.js"',
    );
    expect(first.trim().endsWith(", 0);")).toBe(true);
    // Registration module 1 is missing: its step records that.
    expect(markerSource("step", 1, base).trim().endsWith(', 1, "Cannot find it");')).toBe(true);
    const done = markerSource("done", 0, base);
    expect(done).toContain('import "file:///kit/cpu.js";');
    expect(done).toContain('finish([{"id":"file:///fw/cpu.js file:///kit/cpu.js"');
    expect(markerSource("done", 1, base)).toBe("");
  });

  it("hands the runtime a CommonJS module's exports, and requires a CommonJS original first", () => {
    const cjs = { ...base, module: { ...base.module, format: "commonjs" as const } };
    expect(markerSource("step", 0, cjs)).toContain(", ns.default, [");
    expect(markerSource("require", 0, { ...base, requirePath: "/fw/cpu.js" })).toContain(
      'createRequire("file:///fw/cpu.js")("/fw/cpu.js")',
    );
  });

  it("refuses a registration index the plan does not have, with a code", () => {
    expect(thrown(() => markerSource("step", 5, base)).code).toBe("ERR_DISPATCH_INVALID_OPTION");
  });
});

describe("windowInfo", () => {
  it("names a window by module instance and registration module, so two routes to one load share it", () => {
    const module = { url: "file:///t.js?copy=2", backend: "cpu", exportName: "t", format: "commonjs" as const };
    expect(windowInfo(module, { plugin: "p", url: "file:///r.js" })).toEqual({
      id: "file:///t.js?copy=2 file:///r.js",
      url: "file:///t.js?copy=2",
      backend: "cpu",
      plugin: "p",
      module: "file:///r.js",
    });
  });
});

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
