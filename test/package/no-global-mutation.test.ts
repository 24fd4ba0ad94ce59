import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { loader, makeTree, nodeBinary } from "../integration/fixture.js";
import { frameworkEsm, plugin } from "../integration/trees.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("no global mutation", () => {
  it("importing the package and a full register → provide → dispose cycle change nothing process-wide", () => {
    const out = execFileSync(nodeBinary, ["test/fixtures/global-state.mjs", "test/fixtures/registry-cycle.mjs"], {
      cwd: root,
      encoding: "utf8",
    });
    const result = JSON.parse(out) as { changes: string[]; channelsLeft: string[]; checked: number };
    expect(result.checked).toBeGreaterThan(50);
    expect(result.changes).toEqual([]);
    // Registries subscribe to nothing: the one subscription is the thread's hub's, which answers the
    // handshake of every copy and is never ended (ending it during a publish loses a message on 20.16).
    expect(result.channelsLeft).toEqual(["dispatch-hook:hub"]);
  });

  it("the checker itself sees a mutation (so the test above can fail)", () => {
    const out = execFileSync(nodeBinary, ["test/fixtures/global-state.mjs", "test/fixtures/mutating-scenario.mjs"], {
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

  it("the loader, too: apart from the documented hook installation, nothing process-wide changes", () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "scenario.mjs": [
        'export const channelNames = { hub: "dispatch-hook:hub" };',
        "export async function run() {",
        `  await import(${JSON.stringify(pathToFileURL(loader).href)});`,
        '  const { registry } = await import("dispatch-hook");',
        '  const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
        '  const { PoolLayer } = await import("ml-ops");',
        '  if (numbaFuncify.resolve(new PoolLayer())() !== "pooled") throw new Error("registration did not land");',
        "  registry.verify();",
        "  for (const handle of registry.pending()) handle.dispose();",
        "}",
      ].join("\n"),
    });
    const out = execFileSync(nodeBinary, [join(root, "test/fixtures/global-state.mjs"), "scenario.mjs"], { cwd: dir, encoding: "utf8" });
    const result = JSON.parse(out) as { changes: string[]; channelsLeft: string[] };
    expect(result.changes).toEqual([]);
    // One subscription, the hub's: the installation, the table, the plugin's window and the
    // registries all meet through the hub's methods.
    expect(result.channelsLeft).toEqual(["dispatch-hook:hub"]);
  });
});
