/**
 * A watched ES dispatch module with no registration module gets one appended line, which imports
 * the module's own namespace and announces it: whatever the shape of the export, the table is the
 * export. (Reading a same-named binding instead was tried and reverted: a text check cannot tell a
 * declaration from a comment, a template or a string in every case; some of those cases are below.)
 */
import { describe, expect, it } from "vitest";
import { appJson, loader, makeTree, run } from "../integration/fixture.js";

const framework = (body: string) => ({
  "package.json": appJson({ type: "module" }),
  "node_modules/fw/package.json": JSON.stringify({
    name: "fw",
    type: "module",
    exports: { "./*": "./*" },
    dispatchHook: { backends: { cpu: { module: "./cpu.js", export: "cpu" } } },
  }),
  "node_modules/fw/cpu.js": body,
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  "main.mjs": [
    'import { register } from "dispatch-hook";',
    "class Add {}",
    "register('cpu', Add, (a, b) => a + b);",
    "const seen = [];",
    "for (let i = 1; i <= 3; i++) {",
    '  const { cpu } = await import("fw/cpu.js?v=" + i);',
    "  seen.push(cpu.get(Add)?.(1, 2));",
    "}",
    "console.log(JSON.stringify(seen));",
  ].join("\n"),
});

const aliased = "const cpu = new Map();\nconst current = new Map();\nexport { current as cpu, cpu as legacy };\n";

describe("every shape of export is the table, in every instance (end to end, under the loader)", () => {
  it.each([
    ["declared in place", "export const cpu = new Map();\n"],
    ["assigned after its declaration", "export let cpu;\ncpu = new Map();\n"],
    ["exported under another name", "const impl = new Map();\nexport { impl as cpu };\n"],
    ["aliased, a template holding a declaration", `const doc = \`\nexport const cpu = 1\n\`;\n${aliased}`],
    ["aliased, a block comment holding a declaration", `/* Before 2.0:\nexport const cpu = new Map();\n*/\n${aliased}`],
    ["aliased, a comment cut short by /*/", `// see /*\n/*/\nexport const cpu = new Map();\n*/\n${aliased}`],
    [
      "aliased, a longer name declared in place",
      "const cpu = new Map();\nexport const cpu\u00e9 = 1;\nconst current = new Map();\nexport { current as cpu };\n",
    ],
  ])("%s", async (_, body) => {
    const root = makeTree(framework(body));
    const result = await run(root, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(result.stdout.trim().split("\n").at(-1)).toBe("[3,3,3]");
    expect(result.code).toBe(0);
  });
});
