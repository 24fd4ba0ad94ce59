import { describe, expect, it } from "vitest";
import { backendNameProblem, checkBackend, checkOptions, didYouMean, suggest } from "../../src/registry/options.js";
import { createRegistry } from "../../src/registry/registry.js";
import { threadAudit } from "../../src/registry/thread-audit.js";
import { thrown } from "../helpers.js";

describe("suggest", () => {
  it("suggests only near words", () => {
    expect(suggest("backend", ["backends", "registrations", "expects"])).toBe("backends");
    expect(suggest("registerhooks", ["registerHooks", "register"])).toBe("registerHooks");
    expect(suggest("zzzzzz", ["backends", "registrations", "expects"])).toBeUndefined();
    expect(didYouMean("overide", ["override"])).toBe(' (did you mean "override"?)');
    expect(didYouMean("zzz", ["override"])).toBe("");
  });
});

describe("checkOptions", () => {
  const spec = {
    override: "boolean",
    mode: ["registerHooks", "register"],
    plugins: "array",
    registry: "registry",
    root: "string",
  } as const;

  it("accepts known keys with values of their kind, and undefined as absent; the same keys with another kind are refused", () => {
    const good = { override: true, mode: "register", plugins: [], registry: { register() {} }, root: undefined };
    expect(checkOptions(undefined, spec, "x()")).toBeUndefined();
    expect(checkOptions(good, spec, "x()")).toBeUndefined();
    // Each key, given a value of another kind, is refused: acceptance above is by kind, not by default.
    const refused = Object.keys(good).filter((key) => {
      try {
        checkOptions({ ...good, [key]: 42 }, spec, "x()");
        return false;
      } catch (error) {
        return (error as { code?: string }).code === "ERR_DISPATCH_INVALID_OPTION";
      }
    });
    expect(refused).toEqual(Object.keys(good));
  });

  it("refuses an unknown key with the nearest known one", () => {
    const error = thrown(() => checkOptions({ overide: true }, spec, "register()"));
    expect(error.code).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(error.message).toContain('register(): unknown option "overide" (did you mean "override"?)');
  });

  it("refuses a value of the wrong kind, naming what it must be", () => {
    expect(thrown(() => checkOptions({ mode: "registerhooks" }, spec, "install()")).message).toContain(
      '"mode" must be one of "registerHooks", "register", got "registerhooks" (did you mean "registerHooks"?)',
    );
    expect(thrown(() => checkOptions({ root: 5 }, spec, "install()")).message).toContain('"root" must be a string, got number 5');
    expect(thrown(() => checkOptions({ plugins: {} }, spec, "install()")).message).toContain('"plugins" must be an array');
    expect(thrown(() => checkOptions({ registry: {} }, spec, "install()")).message).toContain('"registry" must be a registry');
    expect(thrown(() => checkOptions(7, spec, "install()")).message).toContain("options must be an object, got number 7");
    expect(thrown(() => checkOptions({ toString: 1 }, spec, "x()")).message).toContain('unknown option "toString"');
  });
});

describe("the audit's options", () => {
  it("verify(), format(), assertComplete() and threadAudit() refuse a misspelt key or a backends that is not a list, and lose nothing", () => {
    const registry = createRegistry();
    class Pool {}
    registry.register("gpu-typo", Pool, () => 1);
    const calls: Array<[string, () => unknown]> = [
      ["verify() or format()", () => registry.verify({ backend: ["gpu-typo"] } as never)],
      ["verify() or format()", () => registry.format({ backends: "gpu-typo" } as never)],
      ["assertComplete()", () => registry.assertComplete({ backend: ["gpu-typo"] } as never)],
      ["assertComplete()", () => registry.assertComplete({ backends: [""] })],
      ["threadAudit()", () => threadAudit({ backendz: [] } as never)],
    ];
    for (const [where, call] of calls) {
      const error = thrown(call);
      expect(error.code).toBe("ERR_DISPATCH_INVALID_OPTION");
      expect(error.message.startsWith(`${where}:`)).toBe(true);
    }
    expect(thrown(calls[0]?.[1] as () => unknown).message).toContain('did you mean "backends"');
    // The registration is still there, and the right spelling still finds it pending.
    expect(registry.pending("gpu-typo")).toHaveLength(1);
    expect(thrown(() => registry.assertComplete({ backends: ["gpu-typo"] })).code).toBe("ERR_DISPATCH_NO_LOADER");
    registry.dispose();
  });
});

describe("backend names", () => {
  it("are plain non-empty strings", () => {
    expect(backendNameProblem("numba")).toBeUndefined();
    expect(backendNameProblem("jax-0.4_gpu")).toBeUndefined();
    expect(backendNameProblem("")?.code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(backendNameProblem(3)?.code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(backendNameProblem("my backend")?.reason).toContain("whitespace or a path separator");
    expect(backendNameProblem("a/b")?.code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(backendNameProblem("__proto__")?.code).toBe("ERR_DISPATCH_RESERVED_NAME");
  });

  it("are checked where they enter, with the call named", () => {
    expect(thrown(() => checkBackend("my backend", "register()")).message).toMatch(/^register\(\): "my backend" cannot be a backend name/);
    expect(() => checkBackend("numba", "register()")).not.toThrow();
  });
});
