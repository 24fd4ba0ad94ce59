import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { help, main } from "../../src/cli/main.js";
import { repoRoot, run } from "../integration/fixture.js";
import { memoryIo } from "./helpers.js";

describe("main", () => {
  it("prints help, and help for each command", async () => {
    const io = memoryIo(process.cwd());
    expect(await main(["--help"], io)).toBe(0);
    expect(io.stdout()).toBe(help);
    // No command at all is a usage error: the usage, and exit 2.
    const bare = memoryIo(process.cwd());
    expect(await main([], bare)).toBe(2);
    expect(bare.stdout() + bare.stderr()).toBe(help);
    const audit = memoryIo(process.cwd());
    expect(await main(["help", "audit"], audit)).toBe(0);
    expect(audit.stdout()).toContain("Usage: dispatch-hook audit");
    const doctor = memoryIo(process.cwd());
    expect(await main(["help", "doctor"], doctor)).toBe(0);
    expect(doctor.stdout()).toContain("Usage: dispatch-hook doctor");
  });

  it("prints the package's version", async () => {
    const io = memoryIo(process.cwd());
    expect(await main(["--version"], io)).toBe(0);
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(io.stdout()).toBe(`${version}\n`);
  });

  it("refuses an unknown command with exit code 2, naming the command meant", async () => {
    const io = memoryIo(process.cwd());
    expect(await main(["doctr"], io)).toBe(2);
    expect(io.stderr()).toContain('unknown command "doctr" (did you mean "doctor"?)');
    const far = memoryIo(process.cwd());
    expect(await main(["zzzz"], far)).toBe(2);
    expect(far.stderr()).toContain('unknown command "zzzz"\n');
  });
});

describe("the dispatch-hook bin", () => {
  it("runs main with the process's arguments and sets the exit code", async () => {
    const bin = join(repoRoot, "dist/cli/bin.js");
    const ok = await run(repoRoot, [bin, "--help"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("Usage: dispatch-hook <command>");
    const bad = await run(repoRoot, [bin, "nope"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown command "nope"');
  });
});
