import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

describe("no global mutation", () => {
  it("importing the package and a full register → provide → dispose cycle change nothing process-wide", () => {
    const out = execFileSync(process.execPath, ["test/fixtures/global-state.mjs", "test/fixtures/registry-cycle.mjs"], {
      cwd: root,
      encoding: "utf8",
    });
    const result = JSON.parse(out) as { changes: string[]; channelsLeft: string[]; checked: number };
    expect(result.checked).toBeGreaterThan(50);
    expect(result.changes).toEqual([]);
    // A registry's subscriptions belong to it and end with dispose().
    expect(result.channelsLeft).toEqual([]);
  });

  it("the checker itself sees a mutation (so the test above can fail)", () => {
    const out = execFileSync(process.execPath, ["test/fixtures/global-state.mjs", "test/fixtures/mutating-scenario.mjs"], {
      cwd: root,
      encoding: "utf8",
    });
    const result = JSON.parse(out) as { changes: string[] };
    expect(result.changes).toEqual(
      expect.arrayContaining([
        "globals.leaked changed",
        "stackTraceLimit changed",
        "listeners.exit changed",
        "moduleProto.require changed",
      ]),
    );
  });
});
