import { AsyncResource } from "node:async_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { backendOptions, currentScope, scopeHolder } from "../../src/dispatchable/options-scope.js";
import { hub } from "../../src/hub.js";
import { thrown } from "../helpers.js";

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

  it("in a callback's synchronous part, a change of async context still reads the storage", () => {
    const holder = scopeHolder();
    const outside = AsyncResource.bind(() => currentScope(holder)?.prioritize);
    const seen = backendOptions({ prioritize: ["a"] }, () => {
      const inner = AsyncResource.bind(() => currentScope(holder)?.prioritize);
      return { direct: currentScope(holder)?.prioritize, outside: outside(), inner: inner() };
    });
    expect(seen).toEqual({ direct: ["a"], outside: undefined, inner: ["a"] });
    expect(holder.depth).toBe(0);
  });

  it("keeps its bookkeeping when the callback throws", () => {
    const holder = scopeHolder();
    expect(() =>
      backendOptions({ prioritize: ["a"] }, () => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(holder.depth).toBe(0);
    expect(currentScope(holder)).toBeUndefined();
  });

  it("scopes with equal options share one key; a traced scope's key is its own kind", () => {
    const key = (options: object) => backendOptions(options, () => currentScope(scopeHolder())?.key);
    expect(key({ prioritize: ["a"], disable: ["x", "y"] })).toBe(key({ prioritize: ["a"], disable: ["y", "x"] }));
    expect(key({ prioritize: ["a"] })).not.toBe(key({ prioritize: ["b"] }));
    expect(key({ prioritize: ["a"] })).not.toBe(key({ prioritize: ["a"], trace: [] }));
  });

  it("counts scope objects alive, and none once they are collected", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const holder = scopeHolder();
    let release: (() => void) | undefined;
    // A promise made in a scope may hold it (Node 20 keeps the store on each promise made in it).
    let pending: Promise<unknown> | undefined = backendOptions({ prioritize: ["a"] }, async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return currentScope(holder)?.prioritize;
    });
    for (let i = 0; i < 5; i++) backendOptions({ prioritize: ["b"] }, () => 1);
    // Equal scopes are one object, held weakly, which a WeakRef read keeps alive until the job ends: collect after it.
    for (let i = 0; i < 20 && holder.live > 1; i++) {
      await sleep(10);
      gc();
    }
    await sleep(10);
    // The pending callback's scope is held by its await; the others are gone.
    expect(holder.live).toBe(1);
    release?.();
    expect(await pending).toEqual(["a"]);
    pending = undefined;
    release = undefined;
    for (let i = 0; i < 20 && holder.live > 0; i++) {
      gc();
      await sleep(10);
    }
    expect(holder.live).toBe(0);
    expect(currentScope(holder)).toBeUndefined();
  });

  it("shares its holder through the hub with copies that ask for the same shape, and only those", () => {
    const holder = scopeHolder();
    expect(hub().shared("backend-scope@2", () => ({}))).toBe(holder);
    expect(hub().shared("backend-scope@1", () => "another shape")).toBe("another shape");
  });

  it("refuses an unknown option with a code", () => {
    expect(() => backendOptions({ prioritise: ["a"] } as never, () => 1)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }),
    );
  });
});

describe("backend names in scopes", () => {
  it("a name no set in the realm declares fails the call with ERR_DISPATCH_UNKNOWN_BACKEND; another set's name is ignored", () => {
    class Jax {}
    const mine = createBackends({ name: "scope-names", discover: false, env: {} });
    mine.declare({ name: "jax-scoped", primaryTypes: [Jax], implementations: { f: () => "jax" } });
    createBackends({ name: "scope-names-other", discover: false, env: {} }).declare({ name: "elsewhere" });
    const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends: mine });
    expect(backendOptions({ prioritize: ["elsewhere"], disable: ["jax-scoped"] }, () => f(new Jax()))).toBe("default");
    expect(() => backendOptions({ prioritize: ["jax-scope"] }, () => f(new Jax()))).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_UNKNOWN_BACKEND",
        message: expect.stringMatching(
          /^f\(\): backendOptions\(\) names the backend "jax-scope", which no backend set declares \(did you mean "jax-scoped"\?\)/,
        ),
      }),
    );
    expect(f(new Jax())).toBe("jax");
  });
});

describe("bad input to backendOptions", () => {
  const refuses = (options: unknown, fn: unknown, words: string) => {
    const error = thrown(() => backendOptions(options as never, fn as never));
    expect(error.code).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(error.message).toContain(words);
  };

  it("refuses a callback that is not a function, before entering any scope", () => {
    refuses({}, 42, "backendOptions(): the callback must be a function, got number 42");
    expect(scopeHolder().depth).toBe(0);
  });

  it("refuses a trace array that cannot be pushed to", () => {
    refuses({ trace: Object.freeze([]) }, () => 1, '"trace" must be an array it can add entries to');
    refuses({ trace: Object.seal([]) }, () => 1, '"trace" must be an array it can add entries to');
    refuses({ trace: Object.defineProperty([], "length", { writable: false }) }, () => 1, '"trace" must be an array');
  });

  it("refuses backend names that are not non-empty strings", () => {
    refuses({ prioritize: [1] }, () => 1, '"prioritize" must list backend names, got number 1 at position 0');
    refuses({ disable: ["jax", ""] }, () => 1, '"disable" must list backend names, got "" at position 1');
  });

  it("refuses options it cannot read, with a code, instead of the getter's or the proxy's error", () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    refuses(proxy, () => 1, "backendOptions(): options cannot be read");
    const getter = Object.defineProperty({}, "prioritize", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    refuses(getter, () => 1, 'backendOptions(): option "prioritize" cannot be read (boom)');
    const list = Proxy.revocable(["jax"], {});
    list.revoke();
    refuses({ disable: list.proxy }, () => 1, 'option "disable" cannot be read');
    expect(scopeHolder().depth).toBe(0);
  });

  it("reads each option once: what it checked is what it uses", () => {
    let reads = 0;
    const options = Object.defineProperty({}, "prioritize", {
      enumerable: true,
      get() {
        reads++;
        return reads === 1 ? ["a"] : 42;
      },
    });
    expect(backendOptions(options, () => currentScope(scopeHolder())?.prioritize)).toEqual(["a"]);
  });
});
