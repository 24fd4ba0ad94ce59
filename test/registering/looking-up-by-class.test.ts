import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Class, Dispatcher, isDispatcher } from "../../src/registry/dispatcher.js";
import { DispatchHookError } from "../../src/registry/errors.js";
import { thrown } from "../helpers.js";

class Op {}
class Elemwise extends Op {}
class Add extends Elemwise {}
class Mul extends Elemwise {}
class Pool extends Op {}

describe("Dispatcher.resolve", () => {
  it("picks the nearest registered ancestor, for values and for classes", () => {
    const table = new Dispatcher({ name: "numba" });
    const onOp = () => "op";
    const onElemwise = () => "elemwise";
    table.register(Op, onOp);
    table.register(Elemwise, onElemwise);
    expect(table.resolve(new Add())).toBe(onElemwise);
    expect(table.resolve(Add)).toBe(onElemwise);
    expect(table.resolve(new Pool())).toBe(onOp);
    expect(table.resolve(Op)).toBe(onOp);
  });

  it("dispatches primitives by their wrapper class", () => {
    const table = new Dispatcher();
    table.register(Number, () => "number");
    table.register(String, () => "string");
    table.register(Object, () => "object");
    expect(table.resolve(3)()).toBe("number");
    expect(table.resolve("x")()).toBe("string");
    expect(table.resolve(true)()).toBe("object");
    expect(table.resolve(10n)()).toBe("object");
  });

  it("dispatches functions without a prototype as values of Function", () => {
    const table = new Dispatcher();
    table.register(Function, () => "function");
    expect(table.resolve(() => 1)()).toBe("function");
  });

  it("calls the implementation with call()", () => {
    const table = new Dispatcher<(op: Op, x: number) => number>();
    table.register(Add, (_op, x) => x + 1);
    expect(table.call(new Add(), 41)).toBe(42);
  });

  it("clears the cache on register and unregister", () => {
    const table = new Dispatcher();
    table.register(Op, () => "op");
    expect(table.resolve(new Add())()).toBe("op");
    table.register(Add, () => "add");
    expect(table.resolve(new Add())()).toBe("add");
    expect(table.unregister(Add)).toBe(true);
    expect(table.unregister(Add)).toBe(false);
    expect(table.resolve(new Add())()).toBe("op");
  });

  it("uses the fallback on a miss", () => {
    const fallback = () => "fallback";
    const table = new Dispatcher({ fallback });
    expect(table.resolve(new Pool())).toBe(fallback);
    expect(table.resolve(Object.create(null))).toBe(fallback);
  });

  it("ignores a lying constructor property", () => {
    const table = new Dispatcher();
    table.register(Add, () => "add");
    const value = Object.assign(new Add(), { constructor: Mul });
    expect(table.resolve(value)()).toBe("add");
  });
});

describe("abstract (protocol) keys", () => {
  class HasShape {
    static [Symbol.hasInstance](value: unknown): boolean {
      return typeof value === "object" && value !== null && "shape" in value;
    }
  }
  class Callable {
    static [Symbol.hasInstance](value: unknown): boolean {
      return typeof value === "object" && value !== null && "call" in value;
    }
  }
  class Tensor {
    shape = [2, 2];
  }

  it("matches only when no concrete ancestor does", () => {
    const table = new Dispatcher();
    table.register(HasShape, () => "protocol");
    expect(table.resolve(new Tensor())()).toBe("protocol");
    table.register(Tensor, () => "concrete");
    expect(table.resolve(new Tensor())()).toBe("concrete");
    table.register(Object, () => "object");
    table.unregister(Tensor);
    // Object is a concrete ancestor, so it wins over the protocol.
    expect(table.resolve(new Tensor())()).toBe("object");
  });

  it("refuses to pick between two matching abstract keys", () => {
    const table = new Dispatcher({ name: "jax" });
    table.register(HasShape, () => "shape");
    table.register(Callable, () => "callable");
    class Both {
      shape = [1];
      call() {}
    }
    const error = thrown(() => table.resolve(new Both()));
    expect(error.code).toBe("ERR_DISPATCH_AMBIGUOUS");
    expect(error.message).toContain("HasShape");
    expect(error.message).toContain("Callable");
    expect(error.message).toContain("Both");
  });

  it("prefers the more specific of two related abstract keys", () => {
    class Sized {
      static [Symbol.hasInstance](value: unknown): boolean {
        return typeof value === "object" && value !== null && "size" in value;
      }
    }
    class Shaped extends Sized {
      static override [Symbol.hasInstance](value: unknown): boolean {
        return typeof value === "object" && value !== null && "size" in value && "shape" in value;
      }
    }
    const table = new Dispatcher();
    table.register(Sized, () => "sized");
    table.register(Shaped, () => "shaped");
    expect(table.resolve({ size: 1, shape: [1] })()).toBe("shaped");
    expect(table.resolve({ size: 1 })()).toBe("sized");
  });

  it("treats a subclass of an abstract key as concrete and nominal", () => {
    class Concrete extends HasShape {}
    const table = new Dispatcher();
    table.register(Concrete, () => "concrete");
    expect(table.resolve(new Concrete())()).toBe("concrete");
    expect(table.has(Concrete)).toBe(true);
    // Nominal: a value with a shape is no Concrete, though the protocol Concrete inherits says yes.
    expect(new Tensor() instanceof Concrete).toBe(true);
    expect(thrown(() => table.resolve(new Tensor())).code).toBe("ERR_DISPATCH_NO_IMPL");
  });
});

describe("the table API", () => {
  it("has, get, entries and name", () => {
    const impl = () => 0;
    const table = new Dispatcher({ backend: "pytorch" });
    expect(table.name).toBe("pytorch");
    expect(new Dispatcher().name).toBe("dispatcher");
    table.register(Add, impl);
    expect(table.has(Add)).toBe(true);
    expect(table.has(Op)).toBe(false);
    expect(table.get(Add)).toBe(impl);
    expect(table.entries.size).toBe(1);
    expect([...table.entries]).toEqual([[Add, impl]]);
    expect(table.entries.get(Add)).toBe(impl);
    expect(table.entries.has(Mul)).toBe(false);
    expect([...table.entries.keys()]).toEqual([Add]);
    expect([...table.entries.values()]).toEqual([impl]);
    const visited: unknown[] = [];
    table.entries.forEach((value, key) => {
      visited.push(key, value);
    });
    expect(visited).toEqual([Add, impl]);
    expect(Object.isFrozen(table.entries)).toBe(true);
    expect("set" in table.entries).toBe(false);
  });

  it("is recognised across copies by its brand", () => {
    expect(isDispatcher(new Dispatcher())).toBe(true);
    expect(isDispatcher({ [Symbol.for("dispatch-hook.dispatcher")]: true })).toBe(true);
    expect(isDispatcher(new Map())).toBe(false);
    expect(isDispatcher(null)).toBe(false);
  });

  it("refuses bad input with codes", () => {
    const table = new Dispatcher();
    expect(thrown(() => table.register((() => {}) as unknown as Class, () => 0)).code).toBe("ERR_DISPATCH_INVALID_OP_TYPE");
    expect(thrown(() => table.register(Add, 5 as never)).code).toBe("ERR_DISPATCH_INVALID_IMPL");
    expect(thrown(() => new Dispatcher({ nmae: "x" } as never)).code).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(thrown(() => new Dispatcher(5 as never)).code).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(thrown(() => new Dispatcher({ fallback: 1 } as never)).code).toBe("ERR_DISPATCH_INVALID_IMPL");
    expect(thrown(() => new Dispatcher({ backend: "" })).code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(table.entries.size).toBe(0);
  });

  it("takes a backend name by the rule every other entry applies", () => {
    for (const [backend, code] of [
      ["a b", "ERR_DISPATCH_INVALID_BACKEND"],
      ["a/b", "ERR_DISPATCH_INVALID_BACKEND"],
      ["constructor", "ERR_DISPATCH_RESERVED_NAME"],
      ["__proto__", "ERR_DISPATCH_RESERVED_NAME"],
    ] as const) {
      const error = thrown(() => new Dispatcher({ backend }));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(/^new Dispatcher\(\): /);
    }
    expect(new Dispatcher({ backend: "jax-0.4_gpu" }).backend).toBe("jax-0.4_gpu");
  });

  it("says what a null-prototype object is when it misses", () => {
    const error = thrown(() => new Dispatcher({ name: "t" }).resolve(Object.create(null)));
    expect(error.code).toBe("ERR_DISPATCH_NO_IMPL");
    expect(error.message).toContain('No implementation in dispatch table "t" for an object with a null prototype.');
    expect(error.message).not.toContain("undefined");
  });
});

/** The reference: walk the chain, take the first registered ancestor. */
function referenceResolve(entries: Map<Class, number>, type: Class): number | undefined {
  for (let p: object | null = type.prototype as object; p !== null; p = Object.getPrototypeOf(p) as object | null) {
    const ctor = (p as { constructor: Class }).constructor;
    if (Object.hasOwn(p, "constructor") && entries.has(ctor)) return entries.get(ctor);
  }
  return undefined;
}

describe("Dispatcher against a reference resolver (property)", () => {
  it("agrees on random hierarchies and register/unregister sequences, cache on", () => {
    const hierarchy = fc.array(fc.nat(), { minLength: 1, maxLength: 24 });
    const step = fc.oneof(
      fc.record({ kind: fc.constant("register" as const), type: fc.nat(), impl: fc.nat(1000) }),
      fc.record({ kind: fc.constant("unregister" as const), type: fc.nat() }),
      fc.record({ kind: fc.constant("resolve" as const), type: fc.nat(), asValue: fc.boolean() }),
    );
    fc.assert(
      fc.property(hierarchy, fc.array(step, { maxLength: 80 }), (parents, steps) => {
        // Class i extends a class with a smaller index (or Object when parents[i] points past it).
        const classes: Class[] = [];
        for (let i = 0; i < parents.length; i++) {
          const parentIndex = (parents[i] as number) % (i + 1);
          const Base = parentIndex === i ? Object : (classes[parentIndex] as new () => object);
          classes.push(class extends (Base as new () => object) {});
        }
        const table = new Dispatcher<() => number>();
        const model = new Map<Class, number>();
        for (const s of steps) {
          const type = classes[s.type % classes.length] as Class;
          if (s.kind === "register") {
            table.register(type, () => s.impl);
            model.set(type, s.impl);
          } else if (s.kind === "unregister") {
            expect(table.unregister(type)).toBe(model.delete(type));
          } else {
            const expected = referenceResolve(model, type);
            const subject = s.asValue ? new (type as new () => object)() : type;
            if (expected === undefined) expect(() => table.resolve(subject)).toThrow(DispatchHookError);
            else expect(table.resolve(subject)()).toBe(expected);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
