import { describe, expect, it } from "vitest";
import type { ModuleInfo } from "../../src/channel.js";
import { esmEpilogue } from "../../src/hooks/instrument.js";
import { appJson, loader, makeTree, run } from "../integration/fixture.js";

const module: ModuleInfo = { url: "file:///fw/cpu.js?v=3", backend: "cpu", exportName: "cpu", format: "module" };
const epilogue = (source: string, exportName = "cpu") =>
  esmEpilogue(source, { ...module, exportName }, "file:///rt.js").slice(source.length);

describe("the ES epilogue", () => {
  it.each([
    "export const cpu = new Map();",
    "export let cpu = new Map();",
    "  export var cpu = new Map();",
    "export function cpu() {}",
    "export async function cpu() {}",
    "export function* cpu() {}",
    "export class cpu {}",
    "export const cpu: Map<Function, Function> = new Map();",
    "/** The cpu table. */\nexport const cpu = new Map();",
    "// export { other as cpu }\nexport const cpu = new Map();\nconst s = `size: ` + cpu.size;",
  ])("reads the table from the binding of `%s`, with no import of its own namespace", (source) => {
    const tail = epilogue(`${source}\n`);
    expect(tail).toContain('import{signalTable as __dh0s}from"file:///rt.js"');
    expect(tail).toContain('typeof cpu>"u"?void 0:cpu');
    expect(tail).not.toContain('file:///fw/cpu.js?v=3";');
  });

  it.each([
    ["export { impl as cpu };", "cpu"],
    ["export { cpu } from './impl.js';", "cpu"],
    ["export const { cpu } = tables;", "cpu"],
    ["export const cpuTable = new Map();", "cpu"],
    ["// export const cpu = new Map();", "cpu"],
    ["export default new Map();", "default"],
    ["const t = new Map(); export { t as if };", "if"],
    // A line that only looks like the declaration: in a comment, a template or a string.
    [
      "/* before 2.0:\nexport const cpu = new Map();\n*/\nconst cpu = new Map();\nconst current = new Map();\nexport { current as cpu, cpu as legacy };",
      "cpu",
    ],
    ["const doc = `\nexport const cpu = 1\n`;\nconst t = new Map();\nexport { t as cpu };", "cpu"],
    ['const a = "/*", b = `*/\nexport const cpu = 1\n`;\nexport { a as cpu };', "cpu"],
    ['const s = "a\\\nexport const cpu = 1";\nexport { s as cpu };', "cpu"],
    ['const s = "a\u2028export const cpu = 1";\nexport { s as cpu };', "cpu"],
  ])("imports its own namespace where `%s` declares no binding named %s", (source, exportName) => {
    const tail = epilogue(`${source}\n`, exportName);
    expect(tail).toContain('import*as __dh0 from"file:///fw/cpu.js?v=3"');
    expect(tail).toContain("signalEvaluated as __dh0s");
  });

  it("escapes a $ in the export's name", () => {
    expect(epilogue("export const $cpu$ = new Map();\n", "$cpu$")).toContain('typeof $cpu$>"u"?void 0:$cpu$');
    expect(epilogue("export const cpu = new Map();\n", "$cpu")).toContain("import*as __dh0");
  });
});

const framework = (body: string) => ({
  "package.json": appJson({ type: "module" }),
  "node_modules/fw/package.json": JSON.stringify({
    name: "fw",
    type: "module",
    exports: { "./*": "./*" },
    dispatchHook: { backends: { cpu: { module: "./cpu.js", export: "cpu" } } },
  }),
  "node_modules/fw/ops.js": "export class Add {}\n",
  "node_modules/fw/cpu.js": body,
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  "main.mjs": [
    'import { register } from "dispatch-hook";',
    'import { Add } from "fw/ops.js";',
    "register('cpu', Add, (a, b) => a + b);",
    "const seen = [];",
    "for (let i = 1; i <= 3; i++) {",
    '  const { cpu } = await import("fw/cpu.js?v=" + i);',
    "  seen.push(cpu.get(Add)?.(1, 2));",
    "}",
    "console.log(JSON.stringify(seen));",
  ].join("\n"),
});

describe("a table announced from its binding (end to end, under the loader)", () => {
  it.each([
    ["declared in place", "export const cpu = new Map();\n"],
    ["assigned after its declaration", "export let cpu;\ncpu = new Map();\n"],
    ["exported under another name", "const impl = new Map();\nexport { impl as cpu };\n"],
    [
      "exported under another name, a template naming a declaration",
      "const impl = new Map();\nexport { impl as cpu };\nconst doc = `\nexport const cpu = 1\n`;\n",
    ],
    [
      "exported under another name, a comment naming a declaration of a binding that is another export",
      "/* Before 2.0 this module did:\nexport const cpu = new Map();\n*/\nconst cpu = new Map();\nconst current = new Map();\nexport { current as cpu, cpu as legacy };\n",
    ],
  ])("lands the app's registration in every instance: %s", async (_, body) => {
    const root = makeTree(framework(body));
    const result = await run(root, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(result.stdout.trim().split("\n").at(-1)).toBe("[3,3,3]");
    expect(result.stderr).toContain("ok: every registration landed");
  });
});
