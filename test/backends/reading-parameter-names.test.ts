// `args` by parameter name: the default implementation's parameter list is read from its source
// text, so comments, strings, templates, regular expressions and nested brackets in default values
// must not move a name to another index; a name that cannot be read is an error, never a guess.
import * as acorn from "acorn";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable, parameterNames } from "../../src/dispatchable/dispatchable.js";
import { thrown } from "../helpers.js";

class Typed {}

/** A set whose "typed" backend runs for Typed values, and a dispatchable over `fn` deciding on `args`. */
function over(fn: (...args: never[]) => unknown, args: readonly string[]) {
  const backends = createBackends({ name: "params", discover: false });
  backends.declare({ name: "typed", primaryTypes: [Typed], implementations: { f: () => "typed" } });
  return dispatchable(fn, { name: "f", args, backends });
}

// Written as plain JavaScript: the parameter lists must reach the test as they are here.
const sources = {
  blockComment: "function poolRef(x /* a tensor, or an array */, size) { return 'reference'; }",
  lineComment: "function f(x, // the input, (a tensor)\n size) { return 'reference'; }",
  stringDefault: 'function blurRef(mode = "max,avg", x) { return "reference"; }',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source text, read as text.
  quotedDefaults: "function f(a = 'x)', b = \"y,(\", c = `z,${'(' + \"}\"}`) { return 'reference'; }",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source text, read as text.
  templateNesting: "function f(a = `${`${1,2}`}`, b) {}",
  regexDefault: "function f(a = /,\\)[,)]/g, b) {}",
  nestedDefaults: "function f(a = (1, 2), b = [3, [4, 5]], c = { d: (6, 7), e: { f: 8 } }, d = (x, y) => x) {}",
  classDefault: "function f(a = class { m(x, y) { return '}'; } }, b) {}",
  destructured: "function f({ a, b } = {}, [c, d], e) {}",
  rest: "function f(a, ...rest) {}",
  restDestructured: "function f(a, ...[b, c]) {}",
  arrowParens: "(a, b = 1) => a",
  arrowBare: "a => a",
  asyncArrowBare: "async a => a",
  asyncArrowParens: "async (a, b) => a",
  arrowNamedAsync: "async => 1",
  asyncFunction: "async function f(a, b) {}",
  generator: "function* f(a, b) {}",
  asyncGenerator: "async function* f(a, b) {}",
  commentsBefore: "function /* (not, these) */ f /* nor (these) */ (a, b) {}",
  unicodeNames: "function f(größe, $x, _y, \\u0061b) {}",
  noParameters: "function f() {}",
  trailingComma: "function f(a, b,) {}",
};
const expected: Record<keyof typeof sources, string[]> = {
  blockComment: ["x", "size"],
  lineComment: ["x", "size"],
  stringDefault: ["mode", "x"],
  quotedDefaults: ["a", "b", "c"],
  templateNesting: ["a", "b"],
  regexDefault: ["a", "b"],
  nestedDefaults: ["a", "b", "c", "d"],
  classDefault: ["a", "b"],
  destructured: ["", "", "e"],
  rest: ["a", "rest"],
  restDestructured: ["a", ""],
  arrowParens: ["a", "b"],
  arrowBare: ["a"],
  asyncArrowBare: ["a"],
  asyncArrowParens: ["a", "b"],
  arrowNamedAsync: ["async"],
  asyncFunction: ["a", "b"],
  generator: ["a", "b"],
  asyncGenerator: ["a", "b"],
  commentsBefore: ["a", "b"],
  unicodeNames: ["größe", "$x", "_y", "ab"],
  noParameters: [],
  trailingComma: ["a", "b"],
};

describe("reading a default implementation's parameter names", () => {
  it("finds the reviewer's two cases at their real index, so the backend is chosen", () => {
    const pool = over(new Function(`return ${sources.blockComment}`)() as never, ["size"]);
    expect(pool(1 as never, new Typed() as never)).toBe("typed");
    expect(pool(new Typed() as never, 1 as never)).toBe("reference");
    const blur = over(new Function(`return ${sources.stringDefault}`)() as never, ["x"]);
    expect(blur("max" as never, new Typed() as never)).toBe("typed");
  });

  for (const [label, source] of Object.entries(sources)) {
    it(`reads ${label}: ${source.replace(/\s+/g, " ")}`, () => {
      const fn = new Function(`return (${source})`)() as Function;
      expect(parameterNames(fn)).toEqual(expected[label as keyof typeof sources]);
    });
  }

  it("reads methods, getters and setters, computed and quoted keys, private methods and class-field arrows", () => {
    const key = "k";
    class C {
      static s(a: number, b: number) {
        return a + b;
      }
      async *g(a: number) {
        yield a;
      }
      [`${key}(x, y)`](a: number) {
        return a;
      }
      "quoted (name"(w: number) {
        return w;
      }
      field = (p: number, q = "),(") => p + q;
      #p(z: number) {
        return z;
      }
      p() {
        return this.#p;
      }
    }
    const o = {
      async m(a: number, b: number) {
        return a + b;
      },
      set v(x: number) {
        void x;
      },
    };
    const c = new C();
    expect(parameterNames(C.s)).toEqual(["a", "b"]);
    expect(parameterNames(C.prototype.g)).toEqual(["a"]);
    expect(parameterNames((c as unknown as Record<string, Function>)[`${key}(x, y)`] as Function)).toEqual(["a"]);
    expect(parameterNames(c["quoted (name"])).toEqual(["w"]);
    expect(parameterNames(c.field)).toEqual(["p", "q"]);
    expect(parameterNames(c.p())).toEqual(["z"]);
    expect(parameterNames(o.m)).toEqual(["a", "b"]);
    expect(parameterNames(Object.getOwnPropertyDescriptor(o, "v")?.set as Function)).toEqual(["x"]);
  });

  it("finds no names in native and bound functions", () => {
    expect(parameterNames(Math.max)).toEqual([]);
    expect(parameterNames(((a: number) => a).bind(null))).toEqual([]);
  });
});

type Node = { type: string; name?: string; params?: Node[]; left?: Node; argument?: Node; value?: Node; properties?: Node[] };

/** What a real parser says the names are ("" for a pattern), from the same text: a function or arrow, or a method. */
function parsedNames(fn: Function): string[] {
  const text = Function.prototype.toString.call(fn);
  const parse = (wrapped: string) =>
    (acorn.parse(wrapped, { ecmaVersion: "latest" }) as unknown as { body: [{ expression: Node }] }).body[0].expression;
  let node: Node;
  try {
    node = parse(`(${text})`);
  } catch {
    node = parse(`({ ${text} })`).properties?.[0]?.value as Node;
  }
  return (node.params ?? []).map((p) => {
    const target = p.type === "AssignmentPattern" ? p.left : p.type === "RestElement" ? p.argument : p;
    return target?.type === "Identifier" ? (target.name as string) : "";
  });
}

describe("parameter lists built at random agree with a real parser (property)", () => {
  it("names each parameter as acorn does, whatever its default, comments and form", () => {
    const defaults = [
      '"max,avg"',
      "'x)'",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source text, read as text.
      "`a,${'(' + \"}\"}`",
      "/,\\)[,)]/g",
      "(1, 2)",
      "[3, [4, 5]]",
      "{ d: (6, 7), e: { f: 8 } }",
      "(p, q) => p",
      "p => (p, 1)",
      "class { m(x, y) { return '}'; } }",
      "1 / 2 / 3",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source text, read as text.
      "`${`${1,2}`}`",
      "function (a, b) { return a / 2 }",
    ];
    const comments = ["", "/* a, b) */", "// c, (d\n"];
    const parameter = fc.record({
      kind: fc.constantFrom("name", "default", "object", "array"),
      value: fc.constantFrom(...defaults),
      before: fc.constantFrom(...comments),
      after: fc.constantFrom(...comments),
    });
    const list = fc.record({ parameters: fc.array(parameter, { maxLength: 5 }), rest: fc.constantFrom("", "name", "array") });
    const form = fc.constantFrom("function", "arrow", "async arrow", "method", "async function");
    fc.assert(
      fc.property(list, form, ({ parameters, rest }, shape) => {
        const texts = parameters.map(({ kind, value, before, after }, i) => {
          const core = {
            name: `n${i}`,
            default: `n${i} = ${value}`,
            object: `{ k${i}, j${i} = ${value} } = {}`,
            array: `[k${i}, [j${i}]]`,
          }[kind];
          return `${before}${core}${after}`;
        });
        if (rest === "name") texts.push("...others");
        if (rest === "array") texts.push("...[r1, r2]");
        const params = texts.join(", ");
        const source = {
          function: `function f(${params}\n) { return 1; }`,
          arrow: `(${params}\n) => 1`,
          "async arrow": `async (${params}\n) => 1`,
          method: `({ m(${params}\n) { return 1; } }).m`,
          "async function": `async function f(${params}\n) {}`,
        }[shape];
        const fn = new Function(`return ${source}`)() as Function;
        expect(parameterNames(fn)).toEqual(parsedNames(fn));
      }),
      { numRuns: 300 },
    );
  });
});

describe("args naming a parameter whose name cannot be read", () => {
  it("is an error with a code that says why and what to give instead, never a wrong index", () => {
    const fn = new Function(`return (${sources.destructured})`)() as never;
    const error = thrown(() => over(fn, ["a"]));
    expect(error.code).toBe("ERR_DISPATCH_INVALID_OPTION");
    expect(error.message).toContain('"a" is not a parameter name that can be read from the default implementation');
    expect(error.message).toContain("parameters 0, 1 are destructured");
    expect(error.message).toContain("give its index");
    // The name that can be read still works beside them.
    expect(over(fn, ["e"])(undefined as never, undefined as never, new Typed() as never)).toBe("typed");
    // A native or bound default: no name can be read at all.
    expect(thrown(() => over(((x: unknown) => x).bind(null) as never, ["x"])).message).toContain("no parameter names can be read");
  });

  it("a name given to two parameters is refused too", () => {
    const fn = new Function("return function f(a, a) {}")() as never;
    expect(thrown(() => over(fn, ["a"])).message).toContain('"a" names parameters 0 and 1');
  });
});
