import { type DispatchMiss, dispatcherBrand } from "../channel.js";
import { noteWrite } from "../direct-writes.js";
import { hub } from "../hub.js";
import { backendDispatchers } from "./backend-dispatchers.js";
import { copies, isAbstract, ownConstructor, typeName } from "./class-facts.js";
import { DispatchHookError, describe } from "./errors.js";
import { withoutLoader } from "./host-hint.js";
import { checkBackend, readOptions } from "./options.js";
import { readonlyView } from "./readonly-view.js";

// biome-ignore lint/suspicious/noExplicitAny: implementations take whatever the framework passes.
export type Impl = (...args: any[]) => unknown;
// biome-ignore lint/suspicious/noExplicitAny: a class of any shape, abstract or not.
export type Class = abstract new (...args: any[]) => unknown;

export interface DispatcherOptions<F extends Impl> {
  /** Shown in errors. Defaults to the backend, or "dispatcher". */
  readonly name?: string;
  /** The backend this table belongs to; lets registries explain a miss. */
  readonly backend?: string;
  /** Returned when nothing matches, instead of throwing. */
  readonly fallback?: F;
}

// Bounds the cache for programs that mint classes at run time; a cleared cache only costs a walk.
const cacheLimit = 4096;

/** A function with a prototype object: a class or an old-style constructor. (Function.prototype is itself a function.) */
export function isClass(value: unknown): value is Class {
  if (typeof value !== "function") return false;
  const proto: unknown = value.prototype;
  return (typeof proto === "object" && proto !== null) || typeof proto === "function";
}

/**
 * A dispatch table keyed by class: the JavaScript counterpart of `functools.singledispatch`.
 * `resolve(value)` finds the implementation registered for the nearest ancestor of the value's
 * class; a class may be passed instead of a value. Primitives dispatch by their wrapper class.
 */
export class Dispatcher<F extends Impl = Impl> {
  readonly name: string;
  readonly backend: string | undefined;
  readonly #fallback: F | undefined;
  readonly #entries = new Map<Class, F>();
  /** Concrete keys by their prototype object, so a chain walk needs no constructor lookups. */
  readonly #byProto = new Map<object, F>();
  readonly #abstract = new Set<Class>();
  /** Resolution cache: the received type's prototype -> implementation. */
  readonly #cache = new Map<object | null, F>();
  /** Prototypes checked for copies since the entries last changed: the uncached branch of abstract keys checks each once. */
  #checked = new WeakSet<object>();
  readonly #view: ReadonlyMap<Class, F>;
  /** The keys by name, made when a class first resolves through an ancestor, then kept in step with the entries. */
  #byName: Map<string, Class[]> | undefined;
  #used = false;

  constructor(options: DispatcherOptions<F> = {}) {
    const read: DispatcherOptions<F> = readOptions(options, { name: "string", backend: "any", fallback: "any" }, "new Dispatcher()");
    if (read.fallback !== undefined && typeof read.fallback !== "function") {
      throw new DispatchHookError("ERR_DISPATCH_INVALID_IMPL", `Dispatcher fallback must be a function, got ${describe(read.fallback)}.`);
    }
    // The one rule for backend names, as register(), provide() and the config files apply it.
    if (read.backend !== undefined) checkBackend(read.backend, "new Dispatcher()");
    this.backend = read.backend;
    this.name = read.name ?? read.backend ?? "dispatcher";
    this.#fallback = read.fallback;
    this.#view = readonlyView(this.#entries);
    if (read.backend !== undefined) backendDispatchers().add(this);
  }

  /** The first use (a lookup, a read of the entries) of a Dispatcher made with a backend: from then on the audit knows it. */
  #use(): void {
    if (this.#used || this.backend === undefined) return;
    this.#used = true;
    backendDispatchers().use(this);
  }

  get [dispatcherBrand](): true {
    return true;
  }

  /** Adds (or replaces) the implementation for `type`. Returns `impl`, so it works as a decorator. */
  register<G extends F>(type: Class, impl: G): G {
    if (!isClass(type)) {
      throw new DispatchHookError("ERR_DISPATCH_INVALID_OP_TYPE", `${this.#label()}: register() needs a class, got ${describe(type)}.`);
    }
    if (typeof impl !== "function") {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_IMPL",
        `${this.#label()}: the implementation for ${type.name || "(anonymous)"} must be a function, got ${describe(impl)}.`,
      );
    }
    this.#entries.set(type, impl);
    noteWrite(this, type);
    if (isAbstract(type)) this.#abstract.add(type);
    else this.#byProto.set(type.prototype as object, impl);
    if (this.#cache.size > 0) this.#cache.clear();
    this.#checked = new WeakSet();
    if (this.#byName !== undefined && type.name) this.#byName.set(type.name, [...this.#named(type.name).filter((k) => k !== type), type]);
    return impl;
  }

  /** Removes the entry for exactly `type`. Returns whether there was one. */
  unregister(type: Class): boolean {
    if (!this.#entries.delete(type)) return false;
    this.#abstract.delete(type);
    this.#byProto.delete(type.prototype as object);
    this.#cache.clear();
    this.#checked = new WeakSet();
    const rest = this.#byName && this.#named(type.name).filter((k) => k !== type);
    if (rest && type.name) this.#byName?.set(type.name, rest);
    return true;
  }

  /** Whether `type` itself (not an ancestor) has an entry. */
  has(type: Class): boolean {
    this.#use();
    return this.#entries.has(type);
  }

  /** The entry for exactly `type`, if any. */
  get(type: Class): F | undefined {
    this.#use();
    return this.#entries.get(type);
  }

  /** A live, read-only view of the entries. */
  get entries(): ReadonlyMap<Class, F> {
    this.#use();
    return this.#view;
  }

  /** The implementation for a value (by its class) or for a class passed directly. */
  resolve(valueOrType: unknown): F {
    if (typeof valueOrType === "object" && valueOrType !== null) {
      const hit = this.#cache.get(Object.getPrototypeOf(valueOrType) as object | null);
      if (hit !== undefined) return hit;
    }
    return this.#resolveSlow(valueOrType);
  }

  /** Resolves for the first argument and calls the implementation with all of them: typed as `F`. */
  call(...args: Parameters<F>): ReturnType<F> {
    return this.resolve(args[0])(...args) as ReturnType<F>;
  }

  #resolveSlow(valueOrType: unknown): F {
    this.#use();
    const isType = isClass(valueOrType);
    let proto: object | null;
    if (isType) proto = valueOrType.prototype as object;
    else if (valueOrType === null || valueOrType === undefined) proto = null;
    else proto = Object.getPrototypeOf(valueOrType) as object | null;

    const cached = this.#cache.get(proto);
    if (cached !== undefined) return cached;

    const concrete = this.#findConcrete(proto);
    if (concrete !== undefined || this.#abstract.size === 0) {
      const found = concrete ?? this.#fallback;
      if (found === undefined) throw this.#miss(valueOrType, isType, proto);
      if (!this.#byProto.has(proto as object)) this.#twinCheck(proto); // else a second copy would be served quietly
      if (this.#cache.size >= cacheLimit) this.#cache.clear();
      this.#cache.set(proto, found);
      return found;
    }
    // A protocol may test the value itself (a plain object with a "shape" field, say), so what the
    // abstract keys decide is not cached by class.
    const abstract = valueOrType == null ? undefined : this.#findAbstract(isType ? proto : valueOrType, proto);
    if (abstract !== undefined) return abstract;
    if (this.#fallback === undefined) throw this.#miss(valueOrType, isType, proto);
    this.#twinCheck(proto);
    return this.#fallback;
  }

  /**
   * Resolved through an ancestor or by the fallback: where the table has an entry for another class of the name and
   * source text of one in the chain below the match, it was made for a second copy, and serves nothing (recorded).
   */
  #twinCheck(proto: object | null): void {
    if (proto === null || this.#checked.has(proto)) return;
    this.#checked.add(proto);
    const chain: Function[] = [];
    for (let p: object | null = proto; p !== null && !this.#byProto.has(p); p = Object.getPrototypeOf(p) as object | null) {
      const ctor = ownConstructor(p);
      if (typeof ctor === "function") chain.push(ctor);
    }
    // Another class that only shares the name (two modules' Add, a factory's classes) is no copy.
    const copied = chain.filter((type) => this.#named(type.name).some((key) => key !== type && copies(key, type)));
    if (copied.length === 0) return;
    hub().miss({ table: this, name: this.name, backend: this.backend, chain: copied, hints: [], context: [] } satisfies DispatchMiss);
  }

  #findConcrete(proto: object | null): F | undefined {
    for (let p = proto; p !== null; p = Object.getPrototypeOf(p) as object | null) {
      const impl = this.#byProto.get(p);
      if (impl !== undefined) return impl;
    }
    return undefined;
  }

  #findAbstract(subject: unknown, proto: object | null): F | undefined {
    const matches: Class[] = [];
    for (const key of this.#abstract) {
      const nominal = proto !== null && Object.prototype.isPrototypeOf.call(key.prototype, proto);
      if (nominal || key[Symbol.hasInstance](subject)) matches.push(key);
    }
    // A match that is an ancestor of another match is less specific; drop it.
    const best = matches.filter(
      (key) => !matches.some((other) => other !== key && Object.prototype.isPrototypeOf.call(key.prototype, other.prototype)),
    );
    if (best.length > 1) {
      const names = best.map((key) => key.name || "(anonymous)").join(", ");
      throw new DispatchHookError(
        "ERR_DISPATCH_AMBIGUOUS",
        `${this.#label()}: ${typeName(proto)} matches the abstract types ${names}, and none is more specific. ` +
          `Register an implementation for ${typeName(proto)} itself to decide.`,
        { details: { table: this.name, matches: best } },
      );
    }
    return best.length === 1 ? this.#entries.get(best[0] as Class) : undefined;
  }

  #miss(valueOrType: unknown, isType: boolean, proto: object | null): DispatchHookError {
    const chain: Function[] = [];
    const names: string[] = [];
    for (let p = proto; p !== null; p = Object.getPrototypeOf(p) as object | null) {
      names.push(typeName(p));
      const ctor = ownConstructor(p);
      if (typeof ctor === "function") chain.push(ctor);
    }
    const received =
      valueOrType === null || valueOrType === undefined
        ? String(valueOrType)
        : proto === null
          ? "an object with a null prototype"
          : `${isType ? "the class" : "an instance of"} ${names[0]}`;
    const hints: string[] = [...this.#twins(chain)];
    const context: string[] = [];
    const h = hub();
    h.miss({ table: this, name: this.name, backend: this.backend, chain, hints, context } satisfies DispatchMiss);
    // A Dispatcher of no backend is no table a loader would serve: nothing to say of loaders.
    if (!h.hasLoader() && this.backend !== undefined) context.push(withoutLoader(this));
    const lines = [
      `No implementation in dispatch table ${JSON.stringify(this.name)} for ${received}.`,
      `  prototype chain: ${names.length > 0 ? names.join(" → ") : "(none)"}`,
      `  registered types: ${this.#registeredNames()}`,
      ...hints.map((hint) => `  ${hint}`),
    ];
    if (hints.length === 0) {
      lines.push(...context.map((line) => `  ${line}`));
      lines.push(`  To fix: register an implementation for ${names[0] ?? "this type"} (or an ancestor) in this table.`);
    }
    return new DispatchHookError("ERR_DISPATCH_NO_IMPL", lines.join("\n"), {
      details: { table: this.name, backend: this.backend, received: names[0], chain, hints, context },
    });
  }

  /** Entries for another class with the name of a class in the chain: two copies of one class. */
  *#twins(chain: readonly Function[]): Iterable<string> {
    const inChain = new Set(chain);
    for (const type of chain) {
      for (const key of this.#named(type.name)) {
        if (inChain.has(key)) continue;
        yield `This table has an implementation for another class named ${type.name}: the ${type.name} that reached it is a second copy of that class (two copies of the module that defines it are loaded, for example one inlined by a bundler or test runner and one loaded by Node). Make the plugin and the framework import the same module instance.`;
      }
    }
  }

  /** The keys named `name` (none for no name), from an index made on first use. */
  #named(name: string): readonly Class[] {
    if (this.#byName === undefined) {
      this.#byName = new Map();
      for (const key of this.#entries.keys()) if (key.name) this.#byName.set(key.name, [...(this.#byName.get(key.name) ?? []), key]);
    }
    return (name && this.#byName.get(name)) || [];
  }

  #registeredNames(): string {
    if (this.#entries.size === 0) return "(none)";
    const names = [...this.#entries.keys()].map((type) => type.name || "(anonymous)");
    return names.length > 12 ? `${names.slice(0, 12).join(", ")} and ${names.length - 12} more` : names.join(", ");
  }

  #label(): string {
    return `Dispatcher ${JSON.stringify(this.name)}`;
  }
}

/** Whether `value` is a Dispatcher from any copy of this package. */
export function isDispatcher(value: unknown): value is Dispatcher {
  return typeof value === "object" && value !== null && (value as { [dispatcherBrand]?: unknown })[dispatcherBrand] === true;
}
