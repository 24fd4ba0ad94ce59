import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { backendOptions, currentScope, scopeHolder } from "../../src/dispatchable/options-scope.js";

describe("backendOptions", () => {
  it("scopes nest: inner prioritized first, disabled add up, the innermost trace wins", () => {
    const outerTrace: never[] = [];
    const seen = backendOptions({ prioritize: ["a"], disable: ["x"], trace: outerTrace }, () =>
      backendOptions({ prioritize: ["b"], disable: ["y"] }, () => currentScope(scopeHolder())),
    );
    expect(seen?.prioritize).toEqual(["b", "a"]);
    expect([...(seen?.disable ?? [])].sort()).toEqual(["x", "y"]);
    expect(seen?.trace).toBe(outerTrace);
    expect(currentScope(scopeHolder())).toBeUndefined();
  });

  it("concurrent async tasks each keep their own options across interleaved awaits", async () => {
    const log: string[] = [];
    const task = (name: string, delays: number[]) =>
      backendOptions({ prioritize: [name] }, async () => {
        for (const d of delays) {
          await sleep(d);
          log.push(`${name}:${currentScope(scopeHolder())?.prioritize.join(",")}`);
        }
      });
    await Promise.all([task("jax", [5, 1, 8]), task("cupy", [1, 6, 1]), task("numpy", [3, 3, 3])]);
    expect(log).toHaveLength(9);
    for (const entry of log) {
      const [name, seen] = entry.split(":");
      expect(seen).toBe(name);
    }
  });

  it("refuses an unknown option with a code", () => {
    expect(() => backendOptions({ prioritise: ["a"] } as never, () => 1)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }),
    );
  });
});
