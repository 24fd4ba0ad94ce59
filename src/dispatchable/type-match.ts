/**
 * Which of a backend's types, primary (its own arrays) or secondary (also accepted, such as plain
 * numbers), a value is. A type is a class (with its subclasses), `{ exactly: Class }`, a protocol
 * (its own `Symbol.hasInstance`, for types that share no base class), or a name (named-type.ts).
 * Classes and names are checked first, along the value's prototype chain, most specific first: what
 * they say is a function of the value's class, which callers cache by. Protocols and abstract types
 * come after, asked of each value (a plain object, a null-prototype object or a proxy on its own).
 */
import { DispatchHookError, describe } from "../registry/errors.js";
import { type NamedType, type NamedTypeResolver, parseNamedType } from "./named-type.js";

/** A type as a backend declares it. */
export type TypeSpec = Function | { readonly exactly: Function } | { readonly [Symbol.hasInstance]: (value: unknown) => boolean } | string;

export type Claim = "primary" | "secondary";

/** The prototype that stands for a value's type: primitives stand for their wrapper's. */
export function typeOf(value: unknown): object | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "object" || typeof value === "function") return Object.getPrototypeOf(value) as object | null;
  return Object.getPrototypeOf(Object(value)) as object;
}

/** A name for a value's type, for messages and traces. */
export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  const proto = typeOf(value);
  if (proto === null) return "null-prototype object";
  const ctor = (proto as { constructor?: { name?: string } }).constructor;
  return typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : typeof value;
}

/** The classes of the relevant values (explicit types included), each once, in order. */
export function classesOf(values: readonly unknown[]): Array<new (...args: never[]) => unknown> {
  const out: Array<new (...args: never[]) => unknown> = [];
  for (const v of values) {
    const proto = typeOf(v) as { constructor?: unknown } | null;
    const ctor = proto === null ? undefined : proto.constructor;
    if (typeof ctor === "function" && !out.includes(ctor as never)) out.push(ctor as new (...args: never[]) => unknown);
  }
  return out;
}

function isProtocol(spec: unknown): boolean {
  return (
    (typeof spec === "object" && spec !== null && typeof (spec as { [Symbol.hasInstance]?: unknown })[Symbol.hasInstance] === "function") ||
    (typeof spec === "function" && Object.hasOwn(spec, Symbol.hasInstance))
  );
}

const isClass = (spec: unknown): spec is Function =>
  typeof spec === "function" && typeof spec.prototype === "object" && spec.prototype !== null;

const exactly = (spec: object): unknown => (spec as { exactly?: unknown }).exactly;

type Asker = { [Symbol.hasInstance](value: unknown): boolean };

/** A class's claims: as the value's own class, and as a class further up its chain. */
interface ClassClaims {
  exact?: Claim;
  subclasses?: Claim;
}

/** The built-in types a declaration may name by their global name: in package.json, where no class can be given. */
export const builtinTypes: Readonly<Record<string, Function>> = { Number, String, Boolean, BigInt, Symbol, Array };

/** A backend's types, sorted into classes, names and protocols. */
export class TypeSet {
  /** Classes by their prototype, so that a class whose prototype's `constructor` is not its own still matches. */
  readonly #classes = new Map<object, ClassClaims>();
  readonly #named: Array<{ readonly type: NamedType; readonly claim: Claim }> = [];
  /** Protocols, and abstract types by name (loaded on first use). */
  readonly #protocols: Array<{ readonly claim: Claim; ask: Asker | NamedType }> = [];
  readonly #resolver: NamedTypeResolver;
  readonly #where: string;
  /** For docs and messages. */
  readonly labels: { readonly primary: readonly string[]; readonly secondary: readonly string[] };

  constructor(primary: readonly TypeSpec[], secondary: readonly TypeSpec[], resolver: NamedTypeResolver, where: string) {
    this.#resolver = resolver;
    this.#where = where;
    const labels = { primary: [] as string[], secondary: [] as string[] };
    const addClass = (type: Function, mode: keyof ClassClaims, claim: Claim) => {
      const claims = this.#classes.get(type.prototype) ?? {};
      claims[mode] ??= claim;
      this.#classes.set(type.prototype, claims);
    };
    const add = (spec: TypeSpec, claim: Claim) => {
      if (typeof spec === "string" && Object.hasOwn(builtinTypes, spec)) {
        addClass(builtinTypes[spec] as Function, "subclasses", claim);
        labels[claim].push(spec);
      } else if (typeof spec === "string") {
        const named = parseNamedType(spec);
        if (named === undefined) {
          throw new DispatchHookError(
            "ERR_DISPATCH_BACKEND_DECLARATION",
            `${where}: the type ${JSON.stringify(spec)} is not a type name. Write "specifier#Export" (with subclasses; "~specifier#Export" says the same), "=specifier#Export" (that class only) or "@specifier#Export" (an abstract type), for example "jax-like/array.js#JaxArray"; or a built-in type's name: ${Object.keys(builtinTypes).join(", ")}.`,
            { details: { type: spec } },
          );
        }
        if (named.mode === "abstract") this.#protocols.push({ ask: named, claim });
        else this.#named.push({ type: named, claim });
        labels[claim].push(spec);
      } else if (isProtocol(spec)) {
        this.#protocols.push({ ask: spec as Asker, claim });
        const label = (spec as { name?: unknown }).name;
        labels[claim].push(typeof label === "string" && label !== "" ? `${label} (protocol)` : "(protocol)");
      } else if (isClass(spec)) {
        addClass(spec, "subclasses", claim);
        labels[claim].push(spec.name || "(anonymous class)");
      } else if (typeof spec === "object" && spec !== null && Object.keys(spec).join() === "exactly" && isClass(exactly(spec))) {
        const type = exactly(spec) as Function;
        addClass(type, "exact", claim);
        labels[claim].push(`exactly ${type.name || "(anonymous class)"}`);
      } else {
        throw new DispatchHookError(
          "ERR_DISPATCH_BACKEND_DECLARATION",
          `${where}: a type must be a class, { exactly: Class }, a protocol or a type name ("specifier#Export"), got ${describe(spec)}.`,
        );
      }
    };
    for (const spec of primary) add(spec, "primary");
    for (const spec of secondary) add(spec, "secondary");
    this.labels = labels;
  }

  /** The classes (by prototype, and whether declared exactly), and whether names are declared: for Classifier. */
  get shape(): { readonly classes: ReadonlyArray<{ readonly proto: object; readonly exact: boolean }>; readonly named: boolean } {
    const classes = [...this.#classes].flatMap(([proto, c]) => [
      ...(c.exact === undefined ? [] : [{ proto, exact: true }]),
      ...(c.subclasses === undefined ? [] : [{ proto, exact: false }]),
    ]);
    return { classes, named: this.#named.length > 0 };
  }

  /** Whether a value (whose type is `proto`) is one of these types, and how. */
  claim(value: unknown, proto: object | null): Claim | undefined {
    return this.classClaim(proto) ?? (value === null || value === undefined ? undefined : this.protocolClaim(value));
  }

  /** What the value's class alone says: its classes and names, most specific first. */
  classClaim(proto: object | null): Claim | undefined {
    let own = true;
    for (let p = proto; p !== null; p = Object.getPrototypeOf(p) as object | null, own = false) {
      const found = this.#classes.get(p);
      const claim = found === undefined ? undefined : own ? (found.exact ?? found.subclasses) : found.subclasses;
      if (claim !== undefined) return claim;
      if (this.#named.length === 0) continue;
      const ctor = Object.hasOwn(p, "constructor") ? (p as { constructor: unknown }).constructor : undefined;
      if (typeof ctor !== "function") continue;
      for (const { type, claim } of this.#named) if ((own || type.mode !== "exact") && this.#resolver.is(type, ctor)) return claim;
    }
    return undefined;
  }

  /**
   * Whether the answer for a value of this class depends on the value: no class or name claims it,
   * and a protocol is left to ask. Of the class alone, so that null and undefined ask too, and a
   * null-prototype object is never answered by a decision made for them.
   */
  asksValues(proto: object | null): boolean {
    return this.#protocols.length > 0 && this.classClaim(proto) === undefined;
  }

  /** What the protocols and abstract types say of this value, asked in order. */
  protocolClaim(value: unknown): Claim | undefined {
    for (const entry of this.#protocols) {
      // An abstract type by name is loaded the first time a value needs it; a failure is thrown.
      if (!(Symbol.hasInstance in entry.ask)) entry.ask = this.#resolver.load(entry.ask as NamedType, this.#where);
      try {
        if ((entry.ask as Asker)[Symbol.hasInstance](value)) return entry.claim;
      } catch (error) {
        // As instanceof would: a protocol that cannot answer is a fault of the backend, not a "no" (the call would go elsewhere, silently).
        const why = error instanceof Error ? error.message : String(error);
        throw new DispatchHookError(
          "ERR_DISPATCH_PROTOCOL",
          `${this.#where}: a protocol of its types threw when asked about a value of type ${typeName(value)} (${why}). A protocol's Symbol.hasInstance must answer true or false for any value.`,
          { cause: error },
        );
      }
    }
    return undefined;
  }
}

/**
 * A value's class facts as a small number, the index the fast path (fast-call.ts) caches decisions
 * under: the position of the first declared class, most specific first, the value is an instance of
 * (for a class declared exactly: of that class itself). Every backend's claim follows from it, and
 * no cache holds a value's class. `prototype.isPrototypeOf(value)` is the prototype walk of
 * `instanceof` with no type feedback about the value: a call site that sees many classes is as fast
 * as one that sees one. A set with named types (decided by module) or more than MAX_TESTS classes
 * has no classifier: its calls take the general path.
 */
const inChain = Object.prototype.isPrototypeOf;

const MAX_TESTS = 30;

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
  static of(backends: Iterable<{ readonly types: TypeSet }>): Classifier | undefined {
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
