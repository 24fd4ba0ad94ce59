// The ml-ops-direct variant: registration modules that write into tensorlab's tables directly, the
// way the Python plugin's modules do. They run after their backend's module, the audit shows every
// write as made outside the registry, and the plugin's expectations count them.
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lastJson, loader, makeTree, repoRoot, run } from "../integration/fixture.js";

const examples = join(repoRoot, "examples");

describe("ml-ops-direct", () => {
  it("lands AvgPool on all four backends under strict, matching the reference, with each write audited", async () => {
    const app = makeTree({
      "package.json": JSON.stringify({ name: "direct-app", type: "module", dependencies: { tensorlab: "*", "ml-ops-direct": "*" } }),
      "node_modules/tensorlab": { symlink: join(examples, "tensorlab") },
      "node_modules/ml-ops-direct": { symlink: join(examples, "ml-ops-direct") },
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "main.mjs": [
        'import { AvgPool, reference } from "ml-ops-direct";',
        'import { backends, compile, Graph, Tensor } from "tensorlab";',
        "const graph = new Graph();",
        "const op = new AvgPool({ kernel: 2, stride: 1 });",
        'graph.output(graph.apply(op, graph.input("x")));',
        "const x = new Tensor(Array.from({ length: 2 * 3 * 5 * 4 }, (_, i) => Math.cos(i)), [2, 3, 5, 4]);",
        "const expected = reference(op, x);",
        "const equal = [];",
        "for (const backend of backends) {",
        "  const [out] = (await compile(graph, { backend }))({ x });",
        "  equal.push(out.shape.join() === expected.shape.join() && out.data.every((v, i) => Math.abs(v - expected.data[i]) < 1e-5));",
        "}",
        'const { registry } = await import("dispatch-hook");',
        "const report = registry.verify();",
        "console.log(JSON.stringify({ equal, outside: report.outside.map((w) => w.backend + ':' + w.op), checked: report.checked, ok: report.ok }));",
      ].join("\n"),
    });
    const result = await run(app, ["--import", loader, "main.mjs"], { DISPATCH_HOOK_AUDIT: "report" });
    expect(lastJson(result.stdout)).toEqual({
      equal: [true, true, true, true],
      outside: ["numba:AvgPool", "jax:AvgPool", "mlx:AvgPool", "pytorch:AvgPool"],
      // Four writes, and the plugin's four expectations met by them.
      checked: 8,
      ok: true,
    });
    expect(
      result.stderr.match(
        /AvgPool\s+applied\s+outside\s+added by .*ml-ops-direct\/dispatch\/\w+\.js, outside the registry \(ml-ops-direct\)/g,
      ),
    ).toHaveLength(4);
    expect(result.code).toBe(0);
  });

  it("the kernel matches the reference on random shapes", async () => {
    const { AvgPool, avgPool, reference } = await import(join(examples, "ml-ops-direct/index.js"));
    const { Tensor } = await import(join(examples, "tensorlab/index.js"));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 3, max: 7 }),
        fc.integer({ min: 3, max: 7 }),
        (k, s, h, w) => {
          const op = new AvgPool({ kernel: k, stride: s });
          const x = new Tensor(
            Array.from({ length: 2 * h * w }, (_, i) => Math.sin(i * 1.7)),
            [1, 2, h, w],
          );
          const a = avgPool(op, x);
          const b = reference(op, x);
          expect(a.shape).toEqual(b.shape);
          for (let i = 0; i < a.size; i++) expect(a.data[i]).toBeCloseTo(b.data[i], 5);
        },
      ),
      { numRuns: 60 },
    );
  });
});
