/**
 * A value's class facts as a small number, the index decisions are cached under: the position of
 * the first of the set's declared classes, tried most specific first, that the value is an instance
 * of (for a class declared exactly: of that class itself). Every backend's class claim follows from
 * it (the classes it is also an instance of are that class's declared ancestors), so values of many
 * classes share a few indices, and no cache needs the value's class, or holds it.
 *
 * The test is `prototype.isPrototypeOf(value)`, which V8 compiles to the same prototype chain walk
 * as `instanceof` and which needs no type feedback about the value: a call site that sees many
 * classes is as fast as one that sees one, and a value of an undeclared class costs one walk per
 * declared class, as a hand-written `instanceof` chain does. The prototype itself is read only for
 * a class declared exactly. Primitives have the index of their wrapper's prototype.
 *
 * A set with named types (decided class by class, by module) or more than MAX_TESTS classes has no
 * classifier; its calls take the general path, keyed by prototype.
 */
import { typeOf } from "./type-match.js";

const inChain = Object.prototype.isPrototypeOf;

export const MAX_TESTS = 30;

export interface Classified {
  readonly types: {
    readonly shape: {
      readonly classes: ReadonlyArray<{ readonly proto: object; readonly exact: boolean }>;
      readonly named: boolean;
    };
  };
}

export class Classifier {
  /** The declared classes' prototypes, most specific first. */
  readonly tests: readonly object[];
  /** The positions of classes declared exactly, as bits. */
  readonly exact: number;
  /** The index of a value of no declared class. */
  readonly none: number;
  /** The index of null and undefined. */
  readonly nullish: number;
  readonly #primitives = new Map<string, number>();

  private constructor(tests: ReadonlyArray<{ readonly proto: object; readonly exact: boolean }>) {
    this.tests = tests.map((t) => t.proto);
    this.exact = tests.reduce((m, t, i) => (t.exact ? m | (1 << i) : m), 0);
    this.none = tests.length;
    this.nullish = tests.length + 1;
  }

  /** The classifier of these backends' types, or undefined when they need the general path. */
  static of(backends: Iterable<Classified>): Classifier | undefined {
    const tests: Array<{ proto: object; exact: boolean }> = [];
    for (const b of backends) {
      const shape = b.types.shape;
      if (shape.named) return undefined;
      for (const c of shape.classes) if (!tests.some((t) => t.proto === c.proto && t.exact === c.exact)) tests.push(c);
    }
    if (tests.length > MAX_TESTS) return undefined;
    // Most specific first: a class before its ancestors, an exact class before the same class with
    // subclasses; otherwise in declaration order (a stable insertion).
    const sorted: Array<{ proto: object; exact: boolean }> = [];
    for (const t of tests) {
      const at = sorted.findIndex((s) => inChain.call(s.proto, t.proto) || (s.proto === t.proto && t.exact && !s.exact));
      if (at < 0) sorted.push(t);
      else sorted.splice(at, 0, t);
    }
    return new Classifier(sorted);
  }

  /** The index of any value. */
  index(value: unknown): number {
    if ((typeof value === "object" && value !== null) || typeof value === "function") {
      const tests = this.tests;
      for (let i = 0; i < tests.length; i++) {
        if (inChain.call(tests[i], value) && ((this.exact & (1 << i)) === 0 || Object.getPrototypeOf(value) === tests[i])) return i;
      }
      return this.none;
    }
    return this.primitive(value);
  }

  /** A primitive's index: its wrapper prototype's; null and undefined have their own. */
  primitive(value: unknown): number {
    if (value === null || value === undefined) return this.nullish;
    const kind = typeof value;
    let index = this.#primitives.get(kind);
    if (index === undefined) {
      const proto = typeOf(value) as object;
      index = this.tests.findIndex((t, i) => t === proto || ((this.exact & (1 << i)) === 0 && inChain.call(t, proto)));
      if (index < 0) index = this.none;
      this.#primitives.set(kind, index);
    }
    return index;
  }
}
