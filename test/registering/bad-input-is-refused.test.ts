import { describe, expect, it } from "vitest";
import { backendNameProblem, checkBackend, checkOptions, didYouMean, suggest } from "../../src/registry/options.js";
import { createRegistry, type Registry } from "../../src/registry/registry.js";
import { checkExpectInput, checkRegisterInput } from "../../src/registry/registry-input.js";
import { threadAudit } from "../../src/registry/thread-audit.js";
import { keyName } from "../../src/table-reads.js";
import { thrown } from "../helpers.js";

class Op {}
class PoolLayer extends Op {}
class Im2Col extends Op {}

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

/** What a registry holds, as comparable data: the report without event numbers. */
function state(registry: Registry) {
  return JSON.parse(JSON.stringify(registry.verify()));
}

class Pool {}

/** Options no one can read: a revoked proxy, and an object whose option's getter throws. */
function unreadable(): { proxy: object; getter: object } {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const getter = Object.defineProperty({}, "override", {
    enumerable: true,
    get() {
      throw new TypeError("getter failed");
    },
  });
  return { proxy, getter };
}

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

  it("refuses options it cannot read with a code, the reader's error as its cause", () => {
    const { proxy, getter } = unreadable();
    const revoked = thrown(() => checkOptions(proxy, spec, "x()"));
    expect(revoked.code).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(revoked.message).toMatch(/^x\(\): options cannot be read \(.*revoked.*\)\.$/);
    expect(revoked.cause).toBeInstanceOf(TypeError);
    const throwing = thrown(() => checkOptions(getter, spec, "x()"));
    expect(throwing.message).toBe('x(): option "override" cannot be read (getter failed).');
    // An inherited option is read and checked like an own one.
    expect(thrown(() => checkOptions(Object.create({ root: 5 }), spec, "x()")).message).toContain('"root" must be a string');
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

  it("verify() and assertComplete() hold the backends named to the backend-name rule, and remember none of a refused call", () => {
    const registry = createRegistry();
    for (const [name, code] of [
      ["a b", "ERR_DISPATCH_INVALID_BACKEND"],
      ["", "ERR_DISPATCH_INVALID_BACKEND"],
      ["__proto__", "ERR_DISPATCH_RESERVED_NAME"],
    ] as const) {
      expect(thrown(() => registry.verify({ backends: [name] })).code).toBe(code);
      expect(thrown(() => registry.assertComplete({ backends: ["cpu", name] })).code).toBe(code);
    }
    // Nothing of the refused calls stays: the thread's audit was never told of cpu or the bad names.
    expect(threadAudit().problems.filter((p) => ["cpu", "a b", "__proto__"].includes(p.backend))).toEqual([]);
    // threadAudit() names a backend set's backends with their set: "jax [ml]" is a name it shows.
    expect(() => threadAudit({ backends: ["jax [ml]"] })).not.toThrow();
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

describe("bad input", () => {
  const cases: Array<[string, string, (r: Registry) => unknown]> = [
    ["empty backend", "ERR_DISPATCH_INVALID_BACKEND", (r) => r.register("", PoolLayer, impl("x"))],
    ["numeric backend", "ERR_DISPATCH_INVALID_BACKEND", (r) => r.register(1 as never, PoolLayer, impl("x"))],
    ["__proto__ backend", "ERR_DISPATCH_RESERVED_NAME", (r) => r.register("__proto__", PoolLayer, impl("x"))],
    ["constructor backend", "ERR_DISPATCH_RESERVED_NAME", (r) => r.provide("constructor", new Map())],
    ["prototype backend", "ERR_DISPATCH_RESERVED_NAME", (r) => r.seal("prototype")],
    ["op type not a class", "ERR_DISPATCH_INVALID_OP_TYPE", (r) => r.register("numba", "PoolLayer" as never, impl("x"))],
    ["arrow op type", "ERR_DISPATCH_INVALID_OP_TYPE", (r) => r.register("numba", (() => {}) as never, impl("x"))],
    ["impl not a function", "ERR_DISPATCH_INVALID_IMPL", (r) => r.register("numba", PoolLayer, {} as never)],
    ["unknown option", "ERR_DISPATCH_INVALID_OPTION", (r) => r.register("numba", PoolLayer, impl("x"), { overide: true } as never)],
    ["override not boolean", "ERR_DISPATCH_INVALID_OPTION", (r) => r.register("numba", PoolLayer, impl("x"), { override: "yes" } as never)],
    ["options not an object", "ERR_DISPATCH_INVALID_OPTION", (r) => r.register("numba", PoolLayer, impl("x"), 3 as never)],
    ["options a revoked proxy", "ERR_DISPATCH_INVALID_OPTION", (r) => r.register("numba", PoolLayer, impl("x"), unreadable().proxy)],
    [
      "options with a getter that throws",
      "ERR_DISPATCH_INVALID_OPTION",
      (r) => r.register("numba", PoolLayer, impl("x"), unreadable().getter),
    ],
    ["provide meta a revoked proxy", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), unreadable().proxy)],
    ["table of unknown shape", "ERR_DISPATCH_TABLE_SHAPE", (r) => r.provide("numba", { set() {} })],
    ["null table", "ERR_DISPATCH_TABLE_SHAPE", (r) => r.provide("numba", null)],
    ["unknown provide meta", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), { url: "x" } as never)],
    ["bad via", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), { via: "magic" } as never)],
    ["bad module", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), { module: 1 } as never)],
    ["bad adapter", "ERR_DISPATCH_INVALID_OPTION", (r) => r.provide("numba", new Map(), { adapter: { set() {} } } as never)],
    ["bad expect", "ERR_DISPATCH_INVALID_OPTION", (r) => r.expect("numba", [1] as never)],
    ["bad expect source", "ERR_DISPATCH_INVALID_OPTION", (r) => r.expect("numba", ["PoolLayer"], 1 as never)],
    ["bad declare", "ERR_DISPATCH_INVALID_OPTION", (r) => r.declare("numba", { adaptor: {} } as never)],
    ["bad registry option", "ERR_DISPATCH_INVALID_OPTION", () => createRegistry({ callsites: false } as never)],
    ["bad callSites", "ERR_DISPATCH_INVALID_OPTION", () => createRegistry({ callSites: 1 } as never)],
  ];

  // What each refusal's message must say, beyond its code.
  const explains: Record<string, RegExp> = {
    ERR_DISPATCH_INVALID_BACKEND: /backend must be a non-empty string|cannot be a backend name/,
    ERR_DISPATCH_RESERVED_NAME: /names a property of every object/,
    ERR_DISPATCH_INVALID_OP_TYPE: /class/,
    ERR_DISPATCH_INVALID_IMPL: /function/,
    ERR_DISPATCH_INVALID_OPTION: /option|must be|expected|needs/i,
    ERR_DISPATCH_TABLE_SHAPE: /table/,
  };
  for (const [label, code, call] of cases) {
    it(`refuses ${label} with ${code} and changes nothing`, () => {
      const registry = createRegistry();
      const table = new Map();
      registry.register("numba", Im2Col, impl("im2col"));
      registry.provide("numba", table);
      registry.register("jax", Im2Col, impl("im2col"));
      const before = state(registry);
      const error = thrown(() => call(registry));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(explains[code] as RegExp);
      expect(state(registry)).toEqual(before);
      expect([...table.keys()]).toEqual([Im2Col]);
      expect(Object.prototype).not.toHaveProperty("numba");
    });
  }
});

describe("registry input checks", () => {
  it("refuse what register() cannot take, each with its code", () => {
    expect(() => checkRegisterInput("my backend", Pool, () => 1, undefined)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_BACKEND" }),
    );
    expect(() => checkRegisterInput("numba", "Pool" as never, () => 1, undefined)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OP_TYPE" }),
    );
    expect(() => checkRegisterInput("numba", Pool, 1 as never, undefined)).toThrow(
      /register\("numba", Pool, …\): the implementation must be a function, got number 1/,
    );
    expect(() => checkRegisterInput("numba", Pool, () => 1, { overide: true } as never)).toThrow(/did you mean "override"/);
    expect(() => checkRegisterInput("numba", Pool, () => 1, { override: true })).not.toThrow();
  });

  it("refuse what expect() cannot take", () => {
    expect(() => checkExpectInput("numba", ["Pool", ""], undefined)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }),
    );
    expect(() => checkExpectInput("numba", ["Pool"], 3 as never)).toThrow(/"source" must be a string/);
  });

  it("names anonymous classes", () => {
    expect(keyName(Pool)).toBe("Pool");
    expect(keyName((() => class {})())).toBe("(anonymous class)");
  });
});
