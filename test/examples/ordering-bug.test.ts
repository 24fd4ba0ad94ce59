// The ordering bug, reproduced and fixed: the upstream reproducer's four contracts, and the demo.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lastJson, makeTree, repoRoot, run } from "../integration/fixture.js";

const examples = join(repoRoot, "examples");

describe("the four contracts", () => {
  it("hold under the loader", async () => {
    // An app that depends on tensorlab but not on ml-ops, wired to the examples. The harness is
    // copied in: the examples' own app (ordering-bug) depends on ml-ops, and importing one of its
    // modules would tell the loader about the plugin.
    const script = readFileSync(join(repoRoot, "test/examples/fixtures/contracts.mjs"), "utf8").replace(
      "../../../examples/ordering-bug/harness.js",
      "./harness.js",
    );
    const app = makeTree({
      "package.json": JSON.stringify({ name: "contracts-app", type: "module", dependencies: { tensorlab: "*", "dispatch-hook": "*" } }),
      "node_modules/tensorlab": { symlink: join(examples, "tensorlab") },
      "node_modules/ml-ops": { symlink: join(examples, "ml-ops") },
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "contracts.mjs": script,
      "harness.js": readFileSync(join(examples, "ordering-bug/harness.js"), "utf8"),
    });
    const result = await run(app, ["--import", "dispatch-hook/loader.mjs", "contracts.mjs"]);
    expect(result.stderr).toBe("");
    const out = lastJson(result.stdout);
    expect(out.before).toEqual([]);
    expect(out.after).toEqual(["PoolLayer", "PoolLayerGrad", "Im2Col", "Col2Im"]);
    expect(out.numbaOps).toEqual(["Add", "Mul", "Relu", "PoolLayer", "PoolLayerGrad", "Im2Col", "Col2Im"]);
    expect(out.mechanisms).toEqual({ numba: ["immediate"], jax: ["hook"], mlx: ["hook"], pytorch: ["hook"], native: ["native"] });
    expect(out.nativeLanded).toBe("native");
    expect(out.complete).toBe(true);
    expect(out.equal).toBe(true);
  });
});

describe("npm run demo", () => {
  it("runs the four scenarios as described and exits 0", async () => {
    const result = await run(repoRoot, ["examples/ordering-bug/demo.mjs"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("All four scenarios behaved as described.");
    expect(result.stdout).toContain("━━ 4. Choosing a backend per call");
    // Scenario 1: the confusing error, and nothing warned before it.
    expect(result.stdout).toContain('No implementation in dispatch table "jaxFuncify"');
    // Scenario 2: every backend matches the reference, and the audit shows each registration.
    expect(result.stdout.match(/matches the reference: true/g)?.length).toBe(5);
    // … and, read as data from the command line's JSON, all sixteen landed through the hook.
    const audit = await run(join(repoRoot, "examples/ordering-bug"), [
      join(repoRoot, "dist/bundle/cli.js"),
      "audit",
      "--json",
      "--",
      "hook-way.mjs",
    ]);
    const report = JSON.parse(audit.stdout) as {
      processes: Array<{ report: { registrations: Array<{ state: string; tables: Array<{ mechanism?: string }> }> } }>;
    };
    const landed = report.processes
      .flatMap((p) => p.report.registrations)
      .filter((r) => r.state === "applied" && r.tables.every((t) => t.mechanism === "hook"));
    expect(landed).toHaveLength(16);
    // Scenario 3: the forgotten flag is named, with the four pending registrations.
    expect(result.stdout).toContain("the dispatch-hook loader is not installed");
    expect(result.stdout).toContain("4 registrations are pending on numba: PoolLayer (#0), PoolLayerGrad (#1), Im2Col (#2), Col2Im (#3).");
  });
});
