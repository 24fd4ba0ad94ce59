/**
 * Which of a backend's types a value is. A backend claims types as primary (its own arrays) or
 * secondary (types it also accepts, such as plain numbers). A type is given as a class, as a protocol
 * (anything with its own `Symbol.hasInstance`, for types that share no base class), or by name
 * (`"specifier#Export"`, never imported). Concrete classes are checked first, along the value's
 * prototype chain, most specific first; protocols after them. What classes and names say is a
 * function of the value's class, and callers cache it by class; a protocol is asked of each value
 * (a plain object, a null-prototype object or a proxy is decided on its own).
 *
 * A type named by name is never imported: a class is that type when its name is the export's and
 * either the module is already in require.cache with that very class as the export, or the class's
 * own source text is in the module's file (a class defined there; an ES module imported with
 * `import` is in no cache Node exposes). The specifier must name the module that defines the class,
 * not one that re-exports it. The file is read once, on the first value whose class has the name.
 */

import { fs, nodeModule, path } from "../builtins.js";
import { DispatchHookError, describe } from "../registry/errors.js";

export interface NamedType {
  readonly specifier: string;
  readonly exportName: string;
  /** The text as declared, for messages and docs. */
  readonly label: string;
}

export function parseNamedType(text: string): NamedType | undefined {
  const hash = text.lastIndexOf("#");
  if (hash <= 0 || hash === text.length - 1) return undefined;
  return { specifier: text.slice(0, hash), exportName: text.slice(hash + 1), label: text };
}

/** Resolves named types against one directory (the declaring package's), remembering what it read. */
export class NamedTypeResolver {
  readonly #base: string;
  readonly #paths = new Map<string, string | null>();
  readonly #sources = new Map<string, string | null>();

  constructor(base: string) {
    this.#base = base;
  }

  /** The file a specifier names, or null when it does not resolve. */
  file(specifier: string): string | null {
    let file = this.#paths.get(specifier);
    if (file === undefined) {
      try {
        file = specifier.startsWith(".")
          ? path.resolve(this.#base, specifier)
          : nodeModule.createRequire(path.join(this.#base, "noop.js")).resolve(specifier);
      } catch {
        file = null;
      }
      this.#paths.set(specifier, file);
    }
    return file;
  }

  /** Whether `type` (a class met in a value's prototype chain) is the named type. */
  is(named: NamedType, type: Function): boolean {
    if (type.name !== named.exportName) return false;
    const file = this.file(named.specifier);
    if (file === null) return false;
    const cached = nodeModule.createRequire(file).cache?.[file];
    if (cached !== undefined && (cached.exports as Record<string, unknown> | undefined)?.[named.exportName] === type) return true;
    let source = this.#sources.get(file);
    if (source === undefined) {
      try {
        source = fs.readFileSync(file, "utf8");
      } catch {
        source = null;
      }
      this.#sources.set(file, source);
    }
    if (source === null) return false;
    const text = Function.prototype.toString.call(type);
    return !text.endsWith("{ [native code] }") && source.includes(text);
  }
}

/** A type as a backend declares it. */
export type TypeSpec = Function | { readonly [Symbol.hasInstance]: (value: unknown) => boolean } | string;

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
  const ctor = proto === null ? undefined : (proto as { constructor?: { name?: string } }).constructor;
  return typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : typeof value;
}

function isProtocol(spec: unknown): boolean {
  return (typeof spec === "object" && spec !== null) || (typeof spec === "function" && Object.hasOwn(spec, Symbol.hasInstance));
}

/** A backend's types, sorted into classes, protocols and names. */
export class TypeSet {
  /** Classes by their prototype, so that a class whose prototype's `constructor` is not its own still matches. */
  readonly #classes = new Map<object, Claim>();
  readonly #protocols: Array<{ readonly spec: TypeSpec; readonly claim: Claim }> = [];
  readonly #named: Array<{ readonly type: NamedType; readonly claim: Claim }> = [];
  readonly #resolver: NamedTypeResolver;
  /** For docs and messages. */
  readonly labels: { readonly primary: readonly string[]; readonly secondary: readonly string[] };

  constructor(primary: readonly TypeSpec[], secondary: readonly TypeSpec[], resolver: NamedTypeResolver, where: string) {
    this.#resolver = resolver;
    const labels = { primary: [] as string[], secondary: [] as string[] };
    const add = (spec: TypeSpec, claim: Claim) => {
      if (typeof spec === "string") {
        const named = parseNamedType(spec);
        if (named === undefined) {
          throw new DispatchHookError(
            "ERR_DISPATCH_BACKEND_DECLARATION",
            `${where}: the type ${JSON.stringify(spec)} is not "specifier#Export" (for example "jax-like/array.js#JaxArray").`,
          );
        }
        this.#named.push({ type: named, claim });
        labels[claim].push(spec);
      } else if (isProtocol(spec)) {
        this.#protocols.push({ spec, claim });
        const label = (spec as { name?: unknown }).name;
        labels[claim].push(typeof label === "string" && label !== "" ? `${label} (protocol)` : "(protocol)");
      } else if (typeof spec === "function" && typeof spec.prototype === "object" && spec.prototype !== null) {
        if (!this.#classes.has(spec.prototype)) this.#classes.set(spec.prototype, claim);
        labels[claim].push(spec.name || "(anonymous class)");
      } else {
        throw new DispatchHookError(
          "ERR_DISPATCH_BACKEND_DECLARATION",
          `${where}: a type must be a class, a protocol or "specifier#Export", got ${describe(spec)}.`,
        );
      }
    };
    for (const spec of primary) add(spec, "primary");
    for (const spec of secondary) add(spec, "secondary");
    this.labels = labels;
  }

  /** Whether a value (whose type is `proto`) is one of these types, and how. */
  claim(value: unknown, proto: object | null): Claim | undefined {
    return this.classClaim(proto) ?? (value === null || value === undefined ? undefined : this.protocolClaim(value));
  }

  /** What the value's class alone says: its classes and names, most specific first. */
  classClaim(proto: object | null): Claim | undefined {
    for (let p = proto; p !== null; p = Object.getPrototypeOf(p) as object | null) {
      const found = this.#classes.get(p);
      if (found !== undefined) return found;
      if (this.#named.length === 0) continue;
      const ctor = Object.hasOwn(p, "constructor") ? (p as { constructor: unknown }).constructor : undefined;
      if (typeof ctor === "function") for (const { type, claim } of this.#named) if (this.#resolver.is(type, ctor)) return claim;
    }
    return undefined;
  }

  /**
   * Whether the answer for a value of this class depends on the value itself: no class or name
   * claims it and a protocol is left to ask. Such a value is decided on its own, every time.
   */
  perValue(value: unknown, proto: object | null): boolean {
    return this.#protocols.length > 0 && value !== null && value !== undefined && this.classClaim(proto) === undefined;
  }

  /** What the protocols say of this value, asked in order. */
  protocolClaim(value: unknown): Claim | undefined {
    for (const { spec, claim } of this.#protocols) {
      try {
        if ((spec as { [Symbol.hasInstance]: (v: unknown) => boolean })[Symbol.hasInstance](value)) return claim;
      } catch {}
    }
    return undefined;
  }
}
