import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { loader, makeTree, nodeBinary } from "./integration/fixture.js";
import { frameworkEsm, plugin } from "./integration/trees.js";

const root = fileURLToPath(new URL("..", import.meta.url));

describe("no global mutation", () => {
  it("importing the package and a full register → provide → dispose cycle change nothing process-wide", () => {
    const out = execFileSync(nodeBinary, ["test/fixtures/global-state.mjs", "test/fixtures/registry-cycle.mjs"], {
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
        'import { channelNames } from "dispatch-hook/hooks";',
        "export { channelNames };",
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
    // What stays subscribed is exactly what answers for the thread: the installation (loader status,
    // miss context), the numba table's notice, the plugin's registration window, and the default
    // registry, which holds the plugin's registration (so it answers the audit and says which
    // entries it wrote, and listens for further instances of the table).
    expect([...result.channelsLeft].sort()).toEqual([
      "dispatch-hook:audit:collect",
      "dispatch-hook:dispatcher:miss",
      "dispatch-hook:loader:status",
      "dispatch-hook:module:evaluated",
      "dispatch-hook:registrations:query",
      "dispatch-hook:table:provided",
      "dispatch-hook:table:query",
      "dispatch-hook:table:written",
    ]);
  });
});
