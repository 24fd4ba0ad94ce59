import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, run } from "../integration/fixture.js";

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
