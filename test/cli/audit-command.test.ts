import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { auditCommand } from "../../src/cli/audit-command.js";
import { makeTree, repoRoot } from "../integration/fixture.js";
import { frameworkEsm, plugin } from "../integration/trees.js";
import { memoryIo } from "./helpers.js";

const example = join(repoRoot, "examples/ordering-bug");

describe("dispatch-hook audit", () => {
  it("runs the healthy example under the loader and prints the table; exit 0", async () => {
    const io = memoryIo(example);
    expect(await auditCommand(["--", "hook-way.mjs"], io)).toBe(0);
    const out = io.stdout();
    expect(out).toContain("dispatch-hook audit");
    expect(out.match(/applied {2}hook/g)?.length).toBe(16);
    expect(out).toContain("ok: every registration landed");
  });

  it("prints JSON Lines with --json", async () => {
    const io = memoryIo(example);
    expect(await auditCommand(["--json", "--", "hook-way.mjs"], io)).toBe(0);
    const lines = io
      .stdout()
      .trim()
      .split("\n")
      .filter((line) => line.startsWith("{"));
    const events = lines.map((line) => JSON.parse(line));
    expect(events.filter((e) => e.kind === "applied")).toHaveLength(16);
    expect(events.at(-1)).toEqual({ kind: "report", ok: true, problems: [] });
  });

  it("exits 1 when a registration failed or is pending on a loaded backend", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/tensorlab/link/numba/dispatch/basic.js": 'export const numbaFuncify = { register() { throw new Error("frozen"); } };\n',
      "main.mjs": 'import "ml-ops/register-now.js";\nawait import("tensorlab/link/numba/dispatch/basic.js");\n',
    });
    const io = memoryIo(dir);
    expect(await auditCommand(["--", "main.mjs"], io)).toBe(1);
    expect(io.stdout()).toContain("[failed] PoolLayer on numba");
    expect(io.stdout()).toContain("frozen");
  });

  it("passes on the program's own failure, and refuses bad usage", async () => {
    const dir = makeTree({ "package.json": "{}", "fail.mjs": "process.exit(7);\n" });
    expect(await auditCommand(["--", "fail.mjs"], memoryIo(dir))).toBe(7);
    const missing = memoryIo(dir);
    expect(await auditCommand([], missing)).toBe(2);
    expect(missing.stderr()).toContain("nothing to run");
    const unknown = memoryIo(dir);
    expect(await auditCommand(["--yaml", "--", "fail.mjs"], unknown)).toBe(2);
    expect(unknown.stderr()).toContain("unknown option --yaml");
    const help = memoryIo(dir);
    expect(await auditCommand(["--help"], help)).toBe(0);
    expect(help.stdout()).toContain("Usage: dispatch-hook audit");
  });
});
