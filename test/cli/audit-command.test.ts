import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { auditCommand } from "../../src/cli/audit-command.js";
import { makeTree, repoRoot } from "../integration/fixture.js";
import { frameworkEsm, plugin } from "../integration/trees.js";
import { memoryIo } from "./helpers.js";

const example = join(repoRoot, "examples/ordering-bug");
const json = (text: string) =>
  text
    .trim()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("dispatch-hook audit", () => {
  it("runs the healthy example under the loader and prints the table; exit 0", async () => {
    const io = memoryIo(example);
    expect(await auditCommand(["--", "hook-way.mjs"], io)).toBe(0);
    expect(io.stdout()).toContain("dispatch-hook audit");
    expect(io.stdout()).toContain("ok: every registration landed");
  });

  it("prints JSON Lines with --json: one line per registration, then the verdict", async () => {
    const io = memoryIo(example);
    expect(await auditCommand(["--json", "--", "hook-way.mjs"], io)).toBe(0);
    const lines = json(io.stdout());
    const registrations = lines.filter((l) => l.kind === "registration");
    expect(registrations).toHaveLength(16);
    expect(registrations.every((r) => r.state === "applied" && (r.origin as { plugin: string }).plugin === "ml-ops")).toBe(true);
    expect(new Set(registrations.map((r) => r.backend))).toEqual(new Set(["numba", "jax", "mlx", "pytorch"]));
    expect(lines.at(-1)).toEqual({ kind: "verdict", ok: true, checked: 32, exitCode: 0, problems: 0 });
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

  it("never prints ok over a program that crashed: it names the exit code, and the file it could not read", async () => {
    const dir = makeTree({
      "package.json": "{}",
      "fail.mjs": "process.exit(7);\n",
      "killed.mjs": 'process.kill(process.pid, "SIGTERM");\nawait new Promise(() => setTimeout(() => {}, 10_000));\n',
      "corrupt.mjs":
        'import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(process.env.DISPATCH_HOOK_AUDIT_FILE, "{"));\n',
    });
    const failed = memoryIo(dir);
    expect(await auditCommand(["--", "fail.mjs"], failed)).toBe(7);
    expect(failed.stdout()).toContain("the program exited with code 7");
    expect(failed.stdout()).not.toContain("ok:");

    const missing = memoryIo(dir);
    expect(await auditCommand(["--", "does-not-exist.mjs"], missing)).toBe(1);
    expect(missing.stdout()).not.toContain("ok:");
    expect(missing.stdout()).toContain("the program exited with code 1");

    const killed = memoryIo(dir);
    expect(await auditCommand(["--", "killed.mjs"], killed)).toBe(143);
    expect(killed.stderr()).toContain("was killed by SIGTERM (exit code 143)");
    expect(killed.stderr()).toContain("it stopped before the loader could write its audit");

    const corrupt = memoryIo(dir);
    expect(await auditCommand(["--", "corrupt.mjs"], corrupt)).toBe(1);
    expect(corrupt.stderr()).toContain("its audit file is corrupt");
    expect(corrupt.stdout()).not.toContain("ok:");
  });

  it("refuses bad usage", async () => {
    const dir = makeTree({ "package.json": "{}" });
    const missing = memoryIo(dir);
    expect(await auditCommand([], missing)).toBe(2);
    expect(missing.stderr()).toContain("nothing to run");
    const unknown = memoryIo(dir);
    expect(await auditCommand(["--yaml", "--", "x.mjs"], unknown)).toBe(2);
    expect(unknown.stderr()).toContain("unknown option --yaml");
    const help = memoryIo(dir);
    expect(await auditCommand(["--help"], help)).toBe(0);
    expect(help.stdout()).toContain("Usage: dispatch-hook audit");
  });
});
