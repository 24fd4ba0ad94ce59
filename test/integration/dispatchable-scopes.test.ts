// Scoped backend options seen by dispatchable calls, in a real process on every Node in the matrix:
// Node 20 and 22 keep AsyncLocalStorage stores per async resource (the front keeps a key per async
// id), Node 24 on keep them in context frames (it asks the storage). Concurrent tasks interleave
// their awaits; bound functions change context inside a scope's synchronous part; code generation
// from strings may be disallowed.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lastJson, makeTree, repoRoot, run } from "./fixture.js";

const script = `
import { AsyncResource } from "node:async_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { backendOptions, createBackends, dispatchable } from ${JSON.stringify(join(repoRoot, "dist/index.js"))};

class Jax {}
const backends = createBackends({ name: "scopes", discover: false, env: {} });
backends.declare({ name: "jax", primaryTypes: [Jax], implementations: { f: () => "jax" } });
backends.declare({ name: "slow", primaryTypes: [Jax], requiresOptIn: true, implementations: { f: () => "slow" } });
const f = dispatchable((x) => "default", { name: "f", args: [0], backends });
const x = new Jax();
const expected = { none: "jax", off: "default", opt: "slow" };
const options = { none: {}, off: { disable: ["jax"] }, opt: { prioritize: ["slow"] } };
const wrong = [];
const check = (label, want) => {
  for (let i = 0; i < 50; i++) {
    const got = f(x);
    if (got !== want) { wrong.push(label + ": " + got + " for " + want); return; }
  }
};

// Concurrent tasks, each in its own scope, interleaving their awaits.
const task = (name, delays) =>
  backendOptions(options[name], async () => {
    check(name + " sync", expected[name]);
    for (const d of delays) {
      await sleep(d);
      check(name + " after sleep", expected[name]);
      await null;
      check(name + " after microtask", expected[name]);
    }
  });
check("before", "jax");
await Promise.all([task("off", [3, 1, 4]), task("opt", [1, 5, 1]), task("none", [2, 2, 2]), task("off", [1, 1, 6])]);
check("after", "jax");

// A function bound outside any scope, called inside one, runs outside it; and the other way round.
const outside = AsyncResource.bind(() => f(x));
const inside = backendOptions(options.off, () => {
  const bound = AsyncResource.bind(() => f(x));
  return { outside: outside(), direct: f(x), nested: backendOptions(options.opt, () => f(x)), again: f(x), bound };
});
const bound = { outside: inside.outside, direct: inside.direct, nested: inside.nested, again: inside.again, later: inside.bound() };
check("after bound", "jax");
console.log(JSON.stringify({ wrong, bound }));
`;

describe("scoped options seen by dispatchable calls (real process)", () => {
  for (const flags of [[], ["--disallow-code-generation-from-strings"]]) {
    it(`each concurrent task sees its own scope, and bound functions their own context${flags.length ? " (no code generation)" : ""}`, async () => {
      const dir = makeTree({ "main.mjs": script });
      const result = await run(dir, [...flags, "main.mjs"]);
      expect(result.stderr).toBe("");
      expect(lastJson(result.stdout)).toEqual({
        wrong: [],
        bound: { outside: "jax", direct: "default", nested: "slow", again: "default", later: "default" },
      });
    });
  }
});
