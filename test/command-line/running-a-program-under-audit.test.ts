import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { auditCommand } from "../../src/cli/audit-command.js";
import type { RunAudit } from "../../src/hooks/run-fold.js";
import { makeTree, repoRoot } from "../integration/fixture.js";
import { frameworkEsm, plugin } from "../integration/trees.js";
import { memoryIo } from "./helpers.js";

const example = join(repoRoot, "examples/ordering-bug");
describe("dispatch-hook audit", () => {
  it("runs the healthy example under the loader and prints the table; exit 0", async () => {
    const io = memoryIo(example);
    expect(await auditCommand(["--", "hook-way.mjs"], io)).toBe(0);
    expect(io.stdout()).toContain("dispatch-hook audit");
    expect(io.stdout()).toContain("ok: every registration landed");
  });

  it("prints one JSON document with --json: every process, each registration, the verdict", async () => {
    const io = memoryIo(example);
    expect(await auditCommand(["--json", "--", "hook-way.mjs"], io)).toBe(0);
    const run = JSON.parse(io.stdout()) as RunAudit & { exitCode: number };
    expect(run).toMatchObject({ format: "dispatch-hook/audit", version: 1, ok: true, exitCode: 0, unreadable: [] });
    expect(run.processes).toHaveLength(1);
    const registrations = run.processes[0]?.report?.registrations ?? [];
    expect(registrations).toHaveLength(16);
    expect(registrations.every((r) => r.state === "applied" && r.origin?.plugin === "ml-ops")).toBe(true);
    expect(new Set(registrations.map((r) => r.backend))).toEqual(new Set(["numba", "jax", "mlx", "pytorch"]));
    expect(run.checked).toBe(32);
  });

  it("a command that cannot be started: exit 127, and with --json still one JSON document, not ok", async () => {
    const io = memoryIo(example);
    expect(await auditCommand(["--json", "--", "dispatch-hook-no-such-command"], io)).toBe(127);
    const run = JSON.parse(io.stdout()) as RunAudit & { exitCode: number; error: string };
    expect(run).toMatchObject({ format: "dispatch-hook/audit", version: 1, ok: false, exitCode: 127, processes: [] });
    expect(run.error).toContain('cannot run "dispatch-hook-no-such-command"');
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

  it("--dir with a command refuses a directory that holds anything, before the program runs: the fold would name each file unreadable after it ran", async () => {
    const dir = makeTree({
      "package.json": "{}",
      "report.json": "{}",
      "touch.mjs": 'import { writeFileSync } from "node:fs";\nwriteFileSync("ran", "");\n',
    });
    const io = memoryIo(dir);
    expect(await auditCommand(["--dir", ".", "--", "touch.mjs"], io)).toBe(2);
    expect(existsSync(join(dir, "ran"))).toBe(false);
    expect(io.stderr()).toMatch(
      /\[ERR_DISPATCH_HOOK_AUDIT_DIR\] the run directory \S+ already holds 3 file\(s\) \(package\.json, report\.json, touch\.mjs\)/,
    );
    // An empty directory is taken.
    const empty = join(dir, "empty");
    mkdirSync(empty);
    const taken = memoryIo(dir);
    expect(await auditCommand(["--dir", "empty", "--", "touch.mjs"], taken)).toBe(1);
    expect(existsSync(join(dir, "ran"))).toBe(true);
    expect(taken.stderr()).not.toContain("ERR_DISPATCH_HOOK_AUDIT_DIR");
  });

  it("a program that fails its own run over the audit's problems (a test runner with the reporter) is not said to have stopped short", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", false),
      "node_modules/tensorlab/link/numba/dispatch/basic.js": 'export const numbaFuncify = { register() { throw new Error("frozen"); } };\n',
      "main.mjs": 'import "ml-ops/register-now.js";\nawait import("tensorlab/link/numba/dispatch/basic.js");\nprocess.exitCode = 1;\n',
    });
    // Named as a test runner would be (npm test); a program that is none keeps the plain wording.
    const io = memoryIo(dir);
    expect(await auditCommand(["--", "node", "main.mjs", "test"], io)).toBe(1);
    expect(io.stdout()).toContain("[failed] PoolLayer on numba");
    expect(io.stdout()).toContain(
      "the program exited with code 1, as a test run does when a test fails, or when dispatch-hook's reporter or a strict audit fails it",
    );
    expect(io.stdout()).not.toContain("proves nothing");
    const plain = memoryIo(dir);
    expect(await auditCommand(["--", "main.mjs"], plain)).toBe(1);
    expect(plain.stdout()).toContain("the program exited with code 1: the audit above is what its processes recorded");
  });

  it("never prints ok over a program that crashed: it names the exit code, and the process that wrote no record", async () => {
    const dir = makeTree({
      "package.json": "{}",
      "fail.mjs": "process.exit(7);\n",
      "killed.mjs": 'process.kill(process.pid, "SIGTERM");\nawait new Promise(() => setTimeout(() => {}, 10_000));\n',
    });
    const failed = memoryIo(dir);
    expect(await auditCommand(["--", "fail.mjs"], failed)).toBe(7);
    expect(failed.stdout()).toContain("the program exited with code 7: the audit above");
    expect(failed.stdout()).not.toMatch(/^ok/m);

    const missing = memoryIo(dir);
    expect(await auditCommand(["--", "does-not-exist.mjs"], missing)).toBe(1);
    expect(missing.stdout()).not.toMatch(/^ok/m);
    expect(missing.stdout()).toContain("the program exited with code 1");

    const killed = memoryIo(dir);
    expect(await auditCommand(["--", "killed.mjs"], killed)).toBe(143);
    expect(killed.stdout()).toContain("was killed by SIGTERM (exit code 143)");
    expect(killed.stdout()).toContain("started, and wrote no audit record");
  });

  it("checks the --json-file path before the command starts: a directory that does not exist, or a directory given as the file, is exit 2 naming the path", async () => {
    const dir = makeTree({ "package.json": "{}", "touch.mjs": 'import { writeFileSync } from "node:fs";\nwriteFileSync("ran", "");\n' });
    mkdirSync(join(dir, "a-dir"));
    for (const path of [join(dir, "missing/dir/x.json"), join(dir, "a-dir"), `${join(dir, "out.json")}/`]) {
      const io = memoryIo(dir);
      expect(await auditCommand(["--json-file", path, "--", "touch.mjs"], io)).toBe(2);
      expect(io.stderr()).toContain(`[ERR_DISPATCH_HOOK_AUDIT_FILE] cannot write the JSON file ${path.replace(/\/$/, "")}`);
      expect(existsSync(join(dir, "ran"))).toBe(false);
    }
    expect(existsSync(join(dir, "out.json"))).toBe(false);
  });

  it("runs a command that is a file but not a JavaScript or TypeScript module as a command: the node binary, a shell script", async () => {
    // Before, any existing file was handed to node as a script: node ran its own binary as
    // JavaScript (a SyntaxError), and a shell script failed with ERR_UNKNOWN_FILE_EXTENSION.
    const byPath = memoryIo(example);
    expect(await auditCommand(["--", process.execPath, "hook-way.mjs"], byPath)).toBe(0);
    expect(byPath.stdout()).toContain("ok: every registration landed");

    const dir = makeTree({
      "package.json": "{}",
      "run.sh": `#!/bin/sh\necho "the script ran" > ran.txt\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(example, "hook-way.mjs"))}\n`,
    });
    chmodSync(join(dir, "run.sh"), 0o755);
    const script = memoryIo(dir);
    expect(await auditCommand(["--", "./run.sh"], script)).toBe(0);
    expect(readFileSync(join(dir, "ran.txt"), "utf8")).toBe("the script ran\n");
    expect(script.stdout()).toContain("ok: every registration landed");
  });

  it("under node --test, says that the test runner's own process is not audited, and why: it runs no --import", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "app", type: "module" }),
      "a.test.mjs": 'import test from "node:test";\nimport "dispatch-hook";\ntest("a", () => {});\n',
      "node_modules/dispatch-hook": { symlink: "<repo>" },
    });
    for (const words of [
      ["--test", "a.test.mjs"],
      [process.execPath, "--test", "a.test.mjs"],
    ]) {
      const io = memoryIo(dir);
      await auditCommand(["--", ...words], io);
      expect(io.stdout()).toMatch(
        /^note: pid \d+ \(the node --test runner\) wrote no record: Node's test runner process runs no --import preload, so the loader never starts in it; it runs none of the tests, and each test file's process is audited$/m,
      );
    }
    // A program that is not the test runner gets no such note.
    const plain = memoryIo(dir);
    await auditCommand(["--", "a.test.mjs"], plain);
    expect(plain.stdout()).not.toContain("note:");
  });

  it("refuses bad usage", async () => {
    const dir = makeTree({ "package.json": "{}" });
    const missing = memoryIo(dir);
    expect(await auditCommand([], missing)).toBe(2);
    expect(missing.stderr()).toContain("nothing to run");
    const unknown = memoryIo(dir);
    expect(await auditCommand(["--yaml", "--", "x.mjs"], unknown)).toBe(2);
    expect(unknown.stderr()).toContain("unknown option --yaml");
    const near = memoryIo(dir);
    expect(await auditCommand(["--jsn", "--", "x.mjs"], near)).toBe(2);
    expect(near.stderr()).toContain('unknown option --jsn (did you mean "--json"?)');
    expect(unknown.stderr()).toContain("Usage: dispatch-hook audit");
    const valueless = memoryIo(dir);
    expect(await auditCommand(["--dir"], valueless)).toBe(2);
    expect(valueless.stderr()).toContain("--dir needs a value");
    const help = memoryIo(dir);
    expect(await auditCommand(["--help"], help)).toBe(0);
    expect(help.stdout()).toContain("Usage: dispatch-hook audit");
  });
});
