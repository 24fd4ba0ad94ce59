/**
 * A framework's backends for its dispatchable functions, declared in code or in a package.json
 * (`"dispatchHook": { "dispatchables": { "<set>": { "<backend>": { … } } } }`). Built on the registry:
 * each backend has a table, each dispatchable an op class, and an implementation is a registration.
 */
import { path } from "../builtins.js";
import type { Class } from "../registry/dispatcher.js";
import { DispatchHookError } from "../registry/errors.js";
import { checkBackend } from "../registry/options.js";
import { createRegistry, type RegisterOptions, type RegistrationHandle, type Registry } from "../registry/registry.js";
import { type Ordered, realmBackends, realmSets, setControl, sortBackends } from "./backend-order.js";
import { type BackendInfo, describeBackend, type FunctionInfo, formatDocs } from "./docs.js";
import {
  type AnyFunction,
  type Implementation,
  type ImplementationOf,
  ImplTable,
  implementationOf,
  unknownFunctions,
  unresolvedImpls,
} from "./impl-table.js";
import { NamedTypeResolver } from "./named-type.js";
import type { Scope } from "./options-scope.js";
import type { Control, PlanBackend } from "./plan.js";
import { checkDeclarations, controlProblems, declarationProblems, strayDeclarations } from "./set-checks.js";
import {
  type BackendDeclaration,
  type BackendSetOptions,
  baseDirectory,
  type Concerning,
  declarePackages,
  type FunctionMap,
  functionName,
  readDeclaration,
  readSetOptions,
  type StrayDeclaration,
  withDetails,
} from "./set-input.js";
import { Classifier, TypeSet } from "./type-match.js";
import { checkWraps, wrappingImplementations } from "./wrapping.js";

export type { BackendDeclaration, BackendSetOptions, FunctionMap } from "./set-input.js";

interface Backend extends PlanBackend, Ordered {
  readonly table: ImplTable;
  readonly declaredIn: string;
  /** The backend it wraps, and how. */
  readonly wraps: string | undefined;
  readonly wrapping: { readonly convert: Implementation; readonly restore: Implementation } | undefined;
}

const sets = new Map<string, number>(); // per name, in this realm: the first is "backends:<name>", a later one "backends#2:<name>"

export class BackendSet<Fns extends FunctionMap = FunctionMap> {
  readonly name: string;
  /** Where every implementation is registered: its audit lists them, per backend. */
  readonly registry: Registry;
  /** @internal Changes with every declaration and every change to a table: cached decisions compare it. */
  version = 0;
  readonly #backends = new Map<string, Backend>();
  readonly #ops = new Map<string, Class>();
  readonly #functions = new Map<string, FunctionInfo>();
  readonly #definitions = new Map<string, { readonly source: string; readonly args: string }>();
  readonly #control: ReturnType<typeof setControl>;
  readonly #orderVariable: string;
  readonly #discover: boolean | string;
  #discovered = false;
  #stray: StrayDeclaration[] = []; // package.json declarations for a set name a typo away
  readonly #eager: boolean;
  #classifier: { version: number; of: Classifier | undefined } | undefined;
  /** The version at which registrations were last checked against the functions, and what was found. */
  #checked: { version: number; error: DispatchHookError | undefined } | undefined;
  readonly #warned = new Set<string>();

  constructor(options: BackendSetOptions) {
    const read = readSetOptions(options);
    const discover = read.discover ?? true;
    this.name = read.name;
    const prefix = read.envPrefix ?? read.name.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
    this.#control = setControl(read.name, prefix, read.env ?? process.env);
    this.#orderVariable = `${prefix}_SET_ORDER`;
    this.#discover = discover;
    this.#eager = read.checkImplementations === "eager";
    // A namespace of its own (its tables never meet a framework's); call sites recorded while an audit runs.
    const nth = sets.set(read.name, (sets.get(read.name) ?? 0) + 1).get(read.name) as number;
    realmSets().add(read.name);
    const namespace = nth === 1 ? `backends:${read.name}` : `backends#${nth}:${read.name}`;
    this.registry = createRegistry({ name: `backends of ${read.name}`, namespace });
    // Without package.json declarations to read, the set knows its backends now (see #readPackages).
    if (discover === false) this.registry.setEvent({ kind: "backend-set", set: read.name });
    // Each time its audit is read: every lazy implementation in a table whose module does not resolve.
    // And each declaration in force that does not do what it says (see declarationProblems).
    this.registry.reportWith(() => [
      ...unresolvedImpls(this.#backends.values(), this.#ops),
      ...declarationProblems(this.name, this.#backends, this.#ops, new Set(this.#functions.keys()), this.#discovered),
      ...strayDeclarations(this.#stray, (name) => realmSets().has(name)),
      ...(this.#discovered ? controlProblems(this.name, () => this.#control(this.#backends, this.version, undefined)) : []),
    ]);
  }

  /** @internal The op class that stands for a dispatchable function in the tables. */
  opFor(fn: string): Class {
    if (!this.#ops.has(fn)) this.#ops.set(fn, { [fn]: class {} }[fn] as Class);
    return this.#ops.get(fn) as Class;
  }

  /**
   * @internal dispatchable() records its function for docs(). One name is one function: another
   * function of a name the set has would share its implementations, and is refused. The same
   * definition again (its module evaluated again, as test runners do) is that function.
   */
  describeFunction(info: FunctionInfo, definition: { readonly source: string; readonly args: string }): void {
    const known = this.#definitions.get(info.name);
    if (known !== undefined && (known.source !== definition.source || known.args !== definition.args)) {
      const other =
        known.source !== definition.source ? "another default implementation" : `other args (${definition.args}, not ${known.args})`;
      throw new DispatchHookError(
        "ERR_DISPATCH_CONFLICT",
        `dispatchable(${info.name}): the set ${this.name} already has a function named ${JSON.stringify(info.name)}, defined with ${other}; ` +
          "the two would share one name's implementations. Give this function another name, or define it once and import it.",
        { details: { set: this.name, function: info.name } },
      );
    }
    this.#definitions.set(info.name, definition);
    this.#functions.set(info.name, info);
    // A function defined after the first decision: the implementation names are checked against it too.
    this.#checked = undefined;
  }

  /** Generated documentation for every dispatchable function of the set, or for one. */
  docs(fn?: string): string {
    return formatDocs(
      this.name,
      [...this.#functions.values()].filter((f) => fn === undefined || f.name === fn),
      this.backends(),
    );
  }

  /**
   * Declares a backend; its implementations are registered at once. An error's details name the set,
   * the backend (when its name can be read) and the function (when it concerns one).
   */
  declare(given: BackendDeclaration<Fns>, declaredIn = "code"): void {
    const at: Concerning = {};
    withDetails(this.name, at, () => this.#declare(given, declaredIn, at));
  }

  #declare(given: BackendDeclaration<Fns>, declaredIn: string, at: Concerning): void {
    const declaration = readDeclaration(given, at);
    const where = `Backend ${JSON.stringify(declaration.name)} of ${this.name}`;
    checkBackend(declaration.name, where);
    if (declaration.name === "default") {
      const why = "traces, resolve() and context.remaining use it for the reference implementation; choose another name";
      throw new DispatchHookError("ERR_DISPATCH_RESERVED_NAME", `${where}: "default" cannot be a backend name: ${why}.`);
    }
    if (this.#backends.has(declaration.name)) {
      throw new DispatchHookError(
        "ERR_DISPATCH_BACKEND_DECLARATION",
        `${where} is declared twice (first in ${this.#backends.get(declaration.name)?.declaredIn}, again in ${declaredIn}). To fix: give one of them another name.`,
      );
    }
    const base = baseDirectory(declaration.base);
    const types = new TypeSet(declaration.primaryTypes ?? [], declaration.secondaryTypes ?? [], new NamedTypeResolver(base), where);
    const table = new ImplTable(() => this.version++);
    const wraps = declaration.wraps === undefined ? undefined : checkWraps(declaration.wraps, declaration.name, where, base, this.#eager);
    for (let next = wraps?.backend; next !== undefined; next = this.#backends.get(next)?.wraps) {
      if (next === declaration.name) throw new DispatchHookError("ERR_DISPATCH_BACKEND_DECLARATION", `${where}: wraps closes a cycle.`);
    }
    const own = (op: Class) => table.get(op) as Implementation | undefined;
    const viaWraps =
      wraps === undefined
        ? undefined
        : wrappingImplementations(wraps, declaration.name, (op) => this.#backends.get(wraps.backend)?.implementation(op));
    const backend: Backend = {
      name: declaration.name,
      types,
      requiresOptIn: declaration.requiresOptIn === true,
      higherPriorityThan: declaration.higherPriorityThan ?? [],
      lowerPriorityThan: declaration.lowerPriorityThan ?? [],
      table,
      declaredIn,
      wraps: wraps?.backend,
      wrapping: wraps,
      implementation: viaWraps === undefined ? own : (op) => own(op) ?? viaWraps(op),
    };
    const impls = Object.entries(declaration.implementations ?? {}).map(([fn, impl]) => {
      at.function = fn;
      return [fn, implementationOf(impl, base, declaration.name, fn, this.#eager)] as const;
    });
    at.function = undefined;
    this.#checkNames(impls.map(([fn]) => ({ backend: declaration.name, fn })));
    // A declaration whose priorities close a cycle is refused here, not at the first call.
    sortBackends([...this.#backends.values(), backend], [], undefined, { set: this.name, variable: this.#orderVariable });
    this.#backends.set(declaration.name, backend);
    realmBackends().add(declaration.name);
    this.version++;
    this.registry.provide(declaration.name, table, { module: declaredIn });
    const site = declaredIn === "code" ? this.declare : path.relative(process.cwd(), declaredIn) || declaredIn;
    for (const [fn, impl] of impls) {
      at.function = fn;
      this.registry.registerFrom(site, declaration.name, this.opFor(fn), impl);
    }
  }

  /**
   * Adds an implementation of `fn` to a backend (declared now or later). The handle undoes it. Given
   * the dispatchable itself (or a name in a typed set), the implementation is checked against its
   * signature. An error's details name the set, the backend and the function (when they can be read).
   */
  register<F extends AnyFunction>(
    backend: string,
    fn: { readonly name: string; readonly reference: F },
    impl: ImplementationOf<F> | string,
    options?: RegisterOptions,
  ): RegistrationHandle;
  register<K extends keyof Fns & string>(
    backend: string,
    fn: K,
    impl: ImplementationOf<Fns[K]> | string,
    options?: RegisterOptions,
  ): RegistrationHandle;
  register(
    backend: string,
    fn: string | { readonly name: string },
    impl: ImplementationOf<AnyFunction> | string,
    options?: RegisterOptions,
  ): RegistrationHandle {
    const at: Concerning = { backend: typeof backend === "string" ? backend : undefined };
    return withDetails(this.name, at, () => {
      checkBackend(backend, "register()");
      const name = functionName(fn, `register(${JSON.stringify(backend)}, …)`, this);
      at.function = name;
      const real = implementationOf(impl, process.cwd(), backend, name, this.#eager);
      this.#checkNames([{ backend, fn: name }]);
      return this.registry.registerFrom(this.register, backend, this.opFor(name), real, options);
    });
  }

  /** Once the set has decided a call, its functions are known: a name near one of them is a typo. */
  #checkNames(names: ReadonlyArray<{ backend: string; fn: string }>): void {
    if (!this.#discovered) return;
    const error = unknownFunctions(this.name, names, new Set(this.#functions.keys()));
    if (error !== undefined) throw error;
  }

  /** Registrations made before the first decision, and what backends wrap and put after, checked at it (and again after each change while one stands). */
  #checkRegistered(): void {
    if (this.#checked?.version !== this.version) {
      const error = checkDeclarations(this.name, this.#backends, this.#ops, new Set(this.#functions.keys()), this.#warned);
      this.#checked = { version: this.version, error };
    }
    if (this.#checked.error !== undefined) throw this.#checked.error;
  }

  /** Reads package.json declarations once, at the set's first decision; one it refuses is left out (a warning, and a problem of its audit). */
  #readPackages(): void {
    if (this.#discovered) return;
    this.#discovered = true;
    if (this.#discover === false) return;
    try {
      this.#stray = declarePackages(this, this.#discover);
    } finally {
      // From now on the set knows its backends: one it does not declare is a problem of its audit.
      this.registry.setEvent({ kind: "backend-set", set: this.name });
    }
  }

  /** @internal The order and the blocks for a scope (undefined: none), recomputed after any change. */
  control(scope: Scope | undefined, fn?: string): Control {
    this.#readPackages();
    this.#checkRegistered();
    return this.#control(this.#backends, this.version, scope, fn);
  }

  /** @internal The class facts calls are keyed by (undefined: the general path), per version. */
  classifier(): Classifier | undefined {
    this.control(undefined);
    if (this.#classifier?.version !== this.version)
      this.#classifier = { version: this.version, of: Classifier.of(this.#backends.values()) };
    return this.#classifier.of;
  }

  /** @internal A backend's implementation of a function, as registered (a lazy one not loaded yet). */
  implementation(backend: string, fn: string): Implementation | undefined {
    const op = this.#ops.get(fn);
    return op === undefined ? undefined : this.#backends.get(backend)?.implementation(op);
  }

  /** The declared backends, in the order they are tried outside any scope. */
  backends(): BackendInfo[] {
    return (this.control(undefined).order as readonly Backend[]).map((b) => describeBackend(b, this.#ops));
  }
}

/** A framework's set of backends for its dispatchable functions. */
export function createBackends<Fns extends FunctionMap = FunctionMap>(options: BackendSetOptions): BackendSet<Fns> {
  return new BackendSet<Fns>(options);
}
