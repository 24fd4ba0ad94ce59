import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { NamedTypeResolver, parseNamedType } from "../../src/dispatchable/named-type.js";
import { TypeSet, typeName, typeOf } from "../../src/dispatchable/type-match.js";
import { makeTree } from "../integration/fixture.js";

class Base {}
class Child extends Base {}
class Other {}
const Duck = { name: "Duck", [Symbol.hasInstance]: (v: unknown) => typeof (v as { quack?: unknown })?.quack === "function" };

describe("TypeSet", () => {
  const resolver = new NamedTypeResolver(process.cwd());
  it("claims classes along the prototype chain, most specific first, then protocols", () => {
    const set = new TypeSet([Base, Duck], [Number], resolver, "test");
    expect(set.claim(new Child(), typeOf(new Child()))).toBe("primary");
    expect(set.claim(3, typeOf(3))).toBe("secondary");
    const duck = { quack() {} };
    expect(set.claim(duck, typeOf(duck))).toBe("primary");
    expect(set.claim(new Other(), typeOf(new Other()))).toBeUndefined();
    expect(set.labels).toEqual({ primary: ["Base", "Duck (protocol)"], secondary: ["Number"] });
    // A subclass listed as secondary beats its primary base: the most specific class decides.
    expect(new TypeSet([Base], [Child], resolver, "t").claim(new Child(), typeOf(new Child()))).toBe("secondary");
  });

  it("matches a class by its prototype, also when the prototype's constructor is inherited (ES5 inheritance)", () => {
    function Legacy() {}
    Legacy.prototype = Object.create(Base.prototype);
    const legacy = new (Legacy as unknown as new () => object)();
    const set = new TypeSet([Legacy], [Base], resolver, "test");
    expect(set.claim(legacy, typeOf(legacy))).toBe("primary");
    expect(set.claim(new Base(), typeOf(new Base()))).toBe("secondary");
    expect(() => new TypeSet([(() => 1) as never], [], resolver, "Backend x")).toThrow(/must be a class/);
  });

  it("refuses a type that is none of class, protocol or name, with a code", () => {
    expect(() => new TypeSet([42 as never], [], resolver, "Backend x")).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_BACKEND_DECLARATION" }),
    );
    expect(() => new TypeSet(["no-hash"], [], resolver, "Backend x")).toThrow(/"specifier#Export"/);
  });

  it("names types of values, primitives by their wrappers", () => {
    expect([typeName(1), typeName("s"), typeName(null), typeName(undefined), typeName(new Child())]).toEqual([
      "Number",
      "String",
      "null",
      "undefined",
      "Child",
    ]);
    // A plain object and one with no prototype are named as the Dispatcher's messages name them.
    expect([typeName({}), typeName(Object.create(null))]).toEqual(["Object", "null-prototype object"]);
  });
});

describe("types by name", () => {
  it("match a class defined in the named module without ever loading it", () => {
    const dir = makeTree({
      "lib/array.cjs":
        "globalThis.loadedArrayModule = true;\nclass JaxArray { constructor() { this.x = 1; } }\nmodule.exports = { JaxArray };\n",
    });
    const resolver = new NamedTypeResolver(dir);
    const set = new TypeSet(["./lib/array.cjs#JaxArray"], [], resolver, "test");
    // Another class of the same name is not it.
    class JaxArray {}
    expect(set.claim(new JaxArray(), typeOf(new JaxArray()))).toBeUndefined();
    expect((globalThis as { loadedArrayModule?: boolean }).loadedArrayModule).toBeUndefined();
    // Loaded by the program: its class is the type.
    const real = createRequire(join(dir, "x.js"))("./lib/array.cjs").JaxArray as new () => object;
    expect(set.claim(new real(), typeOf(new real()))).toBe("primary");
  });

  it("recognise an ES module's class by its source, since imported ES modules are in no cache", async () => {
    const dir = makeTree({ "lib/array.mjs": "export class GpuTensor { constructor() { this.gpu = true; } }\n" });
    const { GpuTensor } = (await import(join(dir, "lib/array.mjs"))) as { GpuTensor: new () => object };
    const set = new TypeSet(["./lib/array.mjs#GpuTensor"], [], new NamedTypeResolver(dir), "test");
    expect(set.claim(new GpuTensor(), typeOf(new GpuTensor()))).toBe("primary");
    writeFileSync(join(dir, "lib/unrelated.mjs"), "");
    expect(
      new TypeSet(["./lib/unrelated.mjs#GpuTensor"], [], new NamedTypeResolver(dir), "t").claim(new GpuTensor(), typeOf(new GpuTensor())),
    ).toBeUndefined();
    expect(parseNamedType("a#B")).toEqual({ specifier: "a", exportName: "B", mode: "subclasses", label: "a#B" });
    expect(parseNamedType("#B")).toBeUndefined();
    // Blanks at either end of the specifier are a typo, wherever they are.
    for (const typo of [" a#B", "a #B", "= a#B", "\ta#B"]) expect(parseNamedType(typo)).toBeUndefined();
  });
});

describe("exact types and subclasses", () => {
  const resolver = new NamedTypeResolver(process.cwd());
  it("a class takes its subclasses, { exactly } only itself, and a subclass of an exact type falls to an ancestor's claim", () => {
    const set = new TypeSet([{ exactly: Child }], [Base], resolver, "test");
    expect(set.claim(new Child(), typeOf(new Child()))).toBe("primary");
    class Grandchild extends Child {}
    expect(set.claim(new Grandchild(), typeOf(new Grandchild()))).toBe("secondary");
    expect(new TypeSet([{ exactly: Child }], [], resolver, "t").claim(new Grandchild(), typeOf(new Grandchild()))).toBeUndefined();
    expect(set.labels).toEqual({ primary: ["exactly Child"], secondary: ["Base"] });
    // The same class both ways: exactly for itself, the other claim for its subclasses.
    const both = new TypeSet([{ exactly: Base }], [Base], resolver, "t");
    expect([both.claim(new Base(), typeOf(new Base())), both.claim(new Child(), typeOf(new Child()))]).toEqual(["primary", "secondary"]);
  });

  it("names: bare and ~ take subclasses, = only the class itself; a subclass defined elsewhere is told apart", () => {
    const dir = makeTree({ "lib/nd.cjs": "class NdArray {}\nclass Masked extends NdArray {}\nmodule.exports = { NdArray, Masked };\n" });
    const { NdArray, Masked } = createRequire(join(dir, "x.js"))("./lib/nd.cjs") as { NdArray: new () => object; Masked: new () => object };
    class Local extends NdArray {}
    const claims = (spec: string) =>
      [new NdArray(), new Masked(), new Local()].map((v) => new TypeSet([spec], [], new NamedTypeResolver(dir), "t").claim(v, typeOf(v)));
    expect(claims("./lib/nd.cjs#NdArray")).toEqual(["primary", "primary", "primary"]);
    expect(claims("~./lib/nd.cjs#NdArray")).toEqual(["primary", "primary", "primary"]);
    expect(claims("=./lib/nd.cjs#NdArray")).toEqual(["primary", undefined, undefined]);
    expect(parseNamedType("=pkg/a.js#A")).toMatchObject({ specifier: "pkg/a.js", exportName: "A", mode: "exact" });
    expect(parseNamedType("@pkg/a.js#A")).toMatchObject({ mode: "abstract" });
  });

  it("an abstract type by name (@) is loaded on the first value that needs it and asked of each value", () => {
    const dir = makeTree({
      "lib/abc.cjs":
        "globalThis.abcLoads = (globalThis.abcLoads ?? 0) + 1;\nexports.Arrayish = { [Symbol.hasInstance]: (v) => typeof v?.shape === 'object' };\nexports.notAType = 3;\n",
    });
    const set = new TypeSet(["@./lib/abc.cjs#Arrayish"], [], new NamedTypeResolver(dir), 'Backend "nd"');
    expect((globalThis as { abcLoads?: number }).abcLoads).toBeUndefined();
    expect(set.claim({ shape: [1] }, typeOf({}))).toBe("primary");
    expect(set.claim({}, typeOf({}))).toBeUndefined();
    expect(set.asksValues(typeOf({}))).toBe(true);
    expect(set.asksValues(null)).toBe(true);
    expect((globalThis as { abcLoads?: number }).abcLoads).toBe(1);
    const broken = (spec: string) => () => new TypeSet([spec], [], new NamedTypeResolver(dir), 'Backend "nd"').claim({}, typeOf({}));
    expect(broken("@./lib/nowhere.cjs#Arrayish")).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_TYPE_LOAD", message: expect.stringMatching(/Backend "nd" .*does not resolve/) }),
    );
    expect(broken("@./lib/abc.cjs#notAType")).toThrow(/instanceof cannot ask/);
  });

  it("refuses a malformed type name with a code, naming the backend", () => {
    for (const name of ["no-hash", "=#X", "~=x#Y", "x#not-an-identifier", "x#", "@"]) {
      expect(() => new TypeSet([name], [], resolver, 'Backend "jax"')).toThrow(
        expect.objectContaining({
          code: "ERR_DISPATCH_BACKEND_DECLARATION",
          message: expect.stringContaining(`Backend "jax": the type ${JSON.stringify(name)}`),
        }),
      );
    }
    expect(() => new TypeSet([{ exactly: () => 1 } as never], [], resolver, "b")).toThrow(/a type must be a class, \{ exactly: Class \}/);
    expect(() => new TypeSet([{ exactly: Base, also: 1 } as never], [], resolver, "b")).toThrow(/a type must be/);
  });
});

describe("exact types and subclasses in calls", () => {
  it("sends a class declared exactly to its backend and its subclasses elsewhere, on every path", () => {
    class NdArray {}
    class Masked extends NdArray {}
    const backends = createBackends({ name: "exact-calls", discover: false, env: {} });
    backends.declare({ name: "numpy", primaryTypes: [{ exactly: NdArray }], implementations: { f: () => "numpy", g: () => "numpy" } });
    backends.declare({ name: "masked", primaryTypes: [Masked], implementations: { f: () => "masked", g: () => "masked" } });
    const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends });
    const g = dispatchable((_xs: unknown[]) => "default", { name: "g", args: (xs: unknown[]) => xs, backends });
    class Other extends NdArray {}
    for (let i = 0; i < 3; i++) {
      expect([f(new NdArray()), f(new Masked()), f(new Other())]).toEqual(["numpy", "masked", "default"]);
      expect([g([new NdArray()]), g([new Masked()]), g([new Other()])]).toEqual(["numpy", "masked", "default"]);
    }
    expect(backends.docs("f")).toContain("primary: exactly NdArray");
  });

  it("an abstract type that cannot be loaded fails the call with ERR_DISPATCH_TYPE_LOAD, naming the backend and the function", () => {
    const backends = createBackends({ name: "abstract-missing", discover: false, env: {} });
    backends.declare({ name: "nd", primaryTypes: ["@./no/such/module.cjs#Arrayish"], implementations: { h: () => "nd" } });
    const h = dispatchable((_x: unknown) => "default", { name: "h", args: [0], backends });
    expect(() => h({})).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_TYPE_LOAD",
        message: expect.stringMatching(/^h\(\): Backend "nd" of abstract-missing names the abstract type/),
        details: expect.objectContaining({ function: "h", type: "@./no/such/module.cjs#Arrayish" }),
      }),
    );
  });
});
