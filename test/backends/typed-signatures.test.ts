// Type tests: tsc checks this file (npx tsc -p tsconfig.json --noEmit), so a regression in the
// public types fails it: an expectTypeOf that no longer holds, or a @ts-expect-error whose line
// stopped being an error. The negative cases sit in functions that never run.
import { describe, expect, expectTypeOf, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import type { CallContext, ImplementationOf } from "../../src/dispatchable/impl-table.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";

class Arr {
  readonly kind: string = "arr";
}
class Jax extends Arr {
  readonly jax = true;
}
const never = (_f: () => unknown) => undefined;

describe("types", () => {
  it("a dispatchable is typed like its default implementation, like() too", () => {
    const backends = createBackends({ name: "types", discover: false });
    const add = dispatchable((x: Arr, _k: number): Arr => x, { name: "add", args: [0], backends });
    expectTypeOf(add).parameters.toEqualTypeOf<[Arr, number]>();
    expectTypeOf(add).returns.toEqualTypeOf<Arr>();
    expectTypeOf(add.like(Jax)).toEqualTypeOf<(x: Arr, k: number) => Arr>();
    expectTypeOf(add.reference).toEqualTypeOf<(x: Arr, k: number) => Arr>();
    expectTypeOf(add.resolve).parameters.toEqualTypeOf<[Arr, number]>();
    never(() => {
      // @ts-expect-error: a string is not an Arr.
      add("x", 1);
      // @ts-expect-error: the result is an Arr, not a number.
      const n: number = add(new Arr(), 1);
      return n;
    });
    expect(add(new Arr(), 1)).toBeInstanceOf(Arr);
  });

  it("each backend's implementation is checked against that signature", () => {
    const backends = createBackends({ name: "types-impl", discover: false });
    const add = dispatchable((x: Arr, _k: number): Arr => x, { name: "add", args: [0], backends });
    // A backend's own, narrower array type is accepted; so is one that takes the call's context.
    backends.register("jax", add, (x: Jax, _k: number) => x);
    backends.register(
      "ctx",
      add,
      Object.assign((_c: CallContext, x: Arr, _k: number) => x, { usesContext: true as const }),
    );
    backends.register("lazy", add, "./somewhere.js#add");
    expectTypeOf<(x: Jax, k: number) => Jax>().toMatchTypeOf<ImplementationOf<typeof add>>();
    never(() => {
      // @ts-expect-error: returns a string, not an Arr.
      backends.register("bad", add, (x: Arr, _k: number) => `${x.kind}`);
      // @ts-expect-error: takes a string where an Arr comes.
      backends.register("bad", add, (_x: string, _k: number) => new Arr());
      // @ts-expect-error: needs a third argument the function never passes.
      backends.register("bad", add, (x: Arr, _k: number, _z: number) => x);
      // @ts-expect-error: says it takes the context, but its first parameter is the array.
      backends.register(
        "bad",
        add,
        Object.assign((x: Arr, _k: number) => x, { usesContext: true as const }),
      );
    });
  });

  it("a typed set checks declarations by function name, typos included", () => {
    const backends = createBackends<{ add: (x: Arr, k: number) => Arr; total: (x: Arr) => number }>({ name: "types-set", discover: false });
    backends.declare({ name: "jax", implementations: { add: (x: Jax) => x, total: "./total.js#total" } });
    backends.register("jax2", "total", (x: Jax) => (x.jax ? 1 : 0));
    never(() => {
      // @ts-expect-error: "ad" is no function of the set.
      backends.declare({ name: "typo", implementations: { ad: (x: Arr) => x } });
      // @ts-expect-error: total returns a number.
      backends.register("bad", "total", (x: Arr) => x);
    });
    // An untyped set takes any name.
    createBackends({ name: "types-untyped", discover: false }).declare({ name: "any", implementations: { whatever: (x: number) => x } });
  });

  it("Dispatcher is generic, so that call() is typed", () => {
    class Op {}
    const table = new Dispatcher<(op: Op, x: number) => number>();
    table.register(Op, (_op, x) => x + 1);
    expectTypeOf(table.call).parameters.toEqualTypeOf<[Op, number]>();
    expectTypeOf(table.call).returns.toEqualTypeOf<number>();
    expectTypeOf(table.resolve(new Op())).toEqualTypeOf<(op: Op, x: number) => number>();
    never(() => {
      // @ts-expect-error: x is a number.
      table.call(new Op(), "1");
      // @ts-expect-error: an implementation must return a number.
      table.register(Op, () => "one");
    });
    expect(table.call(new Op(), 1)).toBe(2);
  });
});
