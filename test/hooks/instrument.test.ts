import diagnosticsChannel from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse } from "acorn";
import { describe, expect, it } from "vitest";
import { channelNames, type ModuleEvaluatedMessage } from "../../src/hooks/channel.js";
import { instrument } from "../../src/hooks/instrument.js";
import type { ModulePlan } from "../../src/hooks/matcher.js";
import { makeTree } from "../integration/fixture.js";

const plan: ModulePlan = { backend: "numba", exportName: "numbaFuncify", registrations: [] };

function parses(code: string, format: "module" | "commonjs"): void {
  if (format === "module") parse(code, { ecmaVersion: "latest", sourceType: "module" });
  else parse(`(function (exports, require, module, __filename, __dirname) {${code}\n})`, { ecmaVersion: "latest", sourceType: "script" });
}

describe("instrument", () => {
  it("only appends: the source is an exact prefix, and it adds one line", () => {
    for (const format of ["module", "commonjs"] as const) {
      for (const source of ["export const a = 1;\n", "export const a = 1; // no newline", "", "\r\nlet x;\r\n"]) {
        const out = instrument(source, "file:///a.js", format, plan);
        expect(out.startsWith(source)).toBe(true);
        const added = out.slice(source.length);
        expect(added.replace(/^\n/, "").trimEnd().split("\n")).toHaveLength(1);
        parses(format === "commonjs" ? out.replaceAll("export const", "const") : out, format);
      }
    }
  });

  it("keeps //# sourceMappingURL (and sourceURL) last", () => {
    const source = "export const a = 1;\n//# sourceURL=a.js\n//# sourceMappingURL=a.js.map\n\n";
    const out = instrument(source, "file:///a.js", "module", plan);
    expect(out.startsWith(source)).toBe(true);
    const lines = out.trimEnd().split("\n");
    expect(lines.slice(-2)).toEqual(["//# sourceURL=a.js", "//# sourceMappingURL=a.js.map"]);
    expect(
      instrument("x;\n//# sourceMappingURL=data:application/json;base64,e30=", "file:///a.js", "commonjs", plan)
        .trimEnd()
        .split("\n")
        .pop(),
    ).toBe("//# sourceMappingURL=data:application/json;base64,e30=");
  });

  it("declares identifiers that occur nowhere in the source", () => {
    const source = "export const __dispatchHook0_ns = 1; const __dispatchHook1 = 2;\n";
    const out = instrument(source, "file:///a.js", "module", plan);
    expect(out.slice(source.length)).toContain("__dispatchHook2_ns");
    parses(out, "module");
  });

  it("interpolates hostile values only through JSON.stringify", () => {
    const hostile = `file:///a"b'c\`d\n</script>*/\u2028\u2029ünï😀.js`;
    const hostilePlan: ModulePlan = { backend: 'nu"mba\n*/', exportName: "x'\u2028", registrations: [`file:///r"${"\n"}*/.js`] };
    for (const format of ["module", "commonjs"] as const) {
      const out = instrument("const a = 1;\n", hostile, format, hostilePlan);
      parses(out, format);
      expect(out).toContain(JSON.stringify(hostile));
      expect(out.split("\n")).toHaveLength(3);
    }
  });

  it("publishes the namespace at the end of evaluation, with exports unchanged", async () => {
    const dir = makeTree({ "registration.mjs": "globalThis.__registrationRanBeforeSignal = true;\n" });
    const file = join(dir, "dispatch.mjs");
    const url = `${pathToFileURL(file).href}?instance=1`;
    const source = "export const numbaFuncify = { kind: 'table' };\nexport default 42;\nexport let late = 1; late = 2;\n";
    const registration = pathToFileURL(join(dir, "registration.mjs")).href;
    writeFileSync(file, instrument(source, url, "module", { ...plan, registrations: [registration] }));
    const seen: Array<{ message: ModuleEvaluatedMessage; registrationRan: unknown }> = [];
    const listener = (message: unknown) =>
      seen.push({
        message: message as ModuleEvaluatedMessage,
        registrationRan: (globalThis as Record<string, unknown>).__registrationRanBeforeSignal,
      });
    diagnosticsChannel.subscribe(channelNames.moduleEvaluated, listener);
    try {
      const namespace = await import(url);
      expect(Object.keys(namespace).sort()).toEqual(["default", "late", "numbaFuncify"]);
      expect(namespace.default).toBe(42);
      expect(namespace.late).toBe(2);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.message).toMatchObject({ version: 1, url, backend: "numba", exportName: "numbaFuncify", format: "module" });
      expect(seen[0]?.message.namespace).toBe(namespace);
      expect(seen[0]?.registrationRan).toBe(true);
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.moduleEvaluated, listener);
      delete (globalThis as Record<string, unknown>).__registrationRanBeforeSignal;
    }
  });

  it("refuses a non-string source", () => {
    expect(() => instrument(Buffer.from("x") as unknown as string, "file:///a.js", "module", plan)).toThrow(TypeError);
  });
});
