// What a backend set is given: one dispatchable function per name (the same definition again is that
// function), and bad input to register() and createBackends(), refused with codes before anything changes.
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { thrown } from "../helpers.js";

class Arr {}

describe("one dispatchable per name in a set", () => {
  it("a second function of a name the set has is refused with a code naming it; the first keeps its implementations", () => {
    const set = createBackends({ name: "names", discover: false });
    set.declare({ name: "fast", primaryTypes: [Arr], implementations: { f: () => "fast f" } });
    const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends: set });
    const another = thrown(() => dispatchable((_x: unknown) => "default2", { name: "f", args: [0], backends: set }));
    expect(another.code).toBe("ERR_DISPATCH_CONFLICT");
    expect(another.message).toContain('dispatchable(f): the set names already has a function named "f"');
    expect(another.message).toContain("another default implementation");
    // The same default with other args is another function too.
    const args = thrown(() => dispatchable((_x: unknown) => "default", { name: "f", args: [1], backends: set }));
    expect(args.code).toBe("ERR_DISPATCH_CONFLICT");
    expect(args.message).toContain("other args");
    expect(f(new Arr())).toBe("fast f");
    expect(set.docs("f")).toContain("f() [names]: dispatches on _x");
    // Another set may have its own f.
    const other = createBackends({ name: "names-other", discover: false });
    expect(dispatchable((_x: unknown) => "default2", { name: "f", args: [0], backends: other })(new Arr())).toBe("default2");
  });

  it("the same function defined again (its module evaluated again) is accepted, and shares the implementations", () => {
    const set = createBackends({ name: "names-again", discover: false });
    set.declare({ name: "fast", primaryTypes: [Arr], implementations: { f: () => "fast f" } });
    const define = () =>
      dispatchable(
        // biome-ignore lint/correctness/noUnusedFunctionParameters: only the parameter list is read.
        function f(x: unknown) {
          return "default";
        },
        { args: ["x"], backends: set },
      );
    const first = define();
    const again = define();
    expect(again).not.toBe(first);
    expect([first(new Arr()), again(new Arr()), again(1)]).toEqual(["fast f", "fast f", "default"]);
  });
});

describe("bad input to a set", () => {
  it("register() refuses a function that is neither a name nor a dispatchable, and options it cannot read, with codes; nothing is lost", () => {
    const set = createBackends({ name: "bad-register", discover: false });
    set.declare({ name: "t", primaryTypes: [Arr] });
    const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends: set });
    set.register("t", f, () => "t f");
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const getter = Object.defineProperty({}, "override", {
      enumerable: true,
      get() {
        throw new Error("no");
      },
    });
    for (const [fn, options] of [
      [null, undefined],
      [42, undefined],
      ["", undefined],
      [{}, undefined],
      [{ name: 3 }, undefined],
      ["g", proxy],
      ["g", getter],
    ] as const) {
      const error = thrown(() => set.register("t", fn as never, () => "x", options as never));
      expect(error.code).toBe("ERR_DISPATCH_INVALID_OPTION");
      expect(error.message).toMatch(/^register\("t", /);
    }
    expect(f(new Arr())).toBe("t f");
    expect(set.registry.verify().registrations.map((r) => `${r.op} on ${r.backend}: ${r.state}`)).toEqual(["f on t: applied"]);
  });

  it("createBackends() refuses a discover that is neither a boolean nor a directory, and options it cannot read", () => {
    for (const discover of [42, "", {}]) {
      expect(thrown(() => createBackends({ name: "bad-discover", discover: discover as never })).message).toContain(
        '"discover" must be a boolean or a directory (a non-empty string)',
      );
    }
    const { proxy, revoke } = Proxy.revocable({ name: "x" }, {});
    revoke();
    expect(thrown(() => createBackends(proxy as never)).code).toBe("ERR_DISPATCH_INVALID_OPTION");
    const getter = Object.defineProperty({ name: "x" }, "env", {
      enumerable: true,
      get() {
        throw new Error("no env");
      },
    });
    expect(thrown(() => createBackends(getter as never)).message).toContain('createBackends(): option "env" cannot be read (no env)');
  });
});
