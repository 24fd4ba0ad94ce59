/**
 * A framework's backends for its dispatchable functions, declared in code or in a package.json
 * (`"dispatchHook": { "dispatchables": { "<set>": { "<backend>": { … } } } }`). Built on the registry:
 * each backend has a table, each dispatchable an op class, and an implementation is a registration.
 */
import { path } from "../builtins.js";
import { discover } from "../hooks/discovery.js";
import type { Class } from "../registry/dispatcher.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import { checkBackend, checkOptions } from "../registry/options.js";
import { createRegistry, type RegisterOptions, type RegistrationHandle, type Registry } from "../registry/registry.js";
import { type Ordered, realmBackends, setControl, sortBackends } from "./backend-order.js";
import { type BackendInfo, describeBackend, type FunctionInfo, formatDocs } from "./docs.js";
import { asImplementation, type Implementation, type ImplementationOf, ImplTable, unknownFunctions } from "./impl-table.js";
import { NamedTypeResolver } from "./named-type.js";
import type { Scope } from "./options-scope.js";
import type { Control, PlanBackend } from "./plan.js";
import { Classifier, TypeSet, type TypeSpec } from "./type-match.js";
import { checkWraps, type Wraps, wrappingImplementations } from "./wrapping.js";

type AnyFunction = (...args: never[]) => unknown;

/** A set's dispatchable functions by name, for typed declarations: `createBackends<{ add: typeof add }>()`. */
export type FunctionMap = Record<string, AnyFunction>;

export interface BackendDeclaration<Fns extends FunctionMap = FunctionMap> {
  readonly name: string;
  readonly primaryTypes?: readonly TypeSpec[];
  readonly secondaryTypes?: readonly TypeSpec[];
  /** Used only when prioritized (by the environment or backendOptions()). */
  readonly requiresOptIn?: boolean;
  readonly higherPriorityThan?: readonly string[];
  readonly lowerPriorityThan?: readonly string[];
  /** Function name → implementation (checked against its signature in a typed set), or `"specifier#export"`, loaded on first use. */
  readonly implementations?: { readonly [K in keyof Fns]?: ImplementationOf<Fns[K]> | string };
  /** Where `"specifier#…"` names resolve from (default: the working directory; for package.json, the package's). */
  readonly base?: string;
  /** Runs another backend's implementations on converted arguments. */
  readonly wraps?: Wraps;
}

export interface BackendSetOptions {
  /** The set's name: package.json declarations under `dispatchables.<name>` belong to it. */
  readonly name: string;
  /** The prefix of the control variables: `<prefix>_PRIORITIZE`, `_BLOCK`, `_SET_ORDER` (default: the name, upper-cased). */
  readonly envPrefix?: string;
  /** The environment to read (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Read package.json declarations (default true); a string is the app's directory. */
  readonly discover?: boolean | string;
  /** "eager": load `"specifier#export"` implementations at registration, so a typo fails there (default "lazy"). */
  readonly checkImplementations?: "eager" | "lazy";
}

interface Backend extends PlanBackend, Ordered {
  readonly table: ImplTable;
  readonly declaredIn: string;
  /** The backend it wraps. */
  readonly wraps: string | undefined;
}

const declarationKinds = {
  name: "string",
  primaryTypes: "array",
  secondaryTypes: "array",
  requiresOptIn: "boolean",
  higherPriorityThan: "array",
  lowerPriorityThan: "array",
  implementations: "object",
  base: "string",
  wraps: "object",
} as const;

let sets = 0;

export class BackendSet<Fns extends FunctionMap = FunctionMap> {
  readonly name: string;
  /** Where every implementation is registered: its audit lists them, per backend. */
  readonly registry: Registry;
  /** @internal Changes with every declaration and every change to a table: cached decisions compare it. */
  version = 0;
  readonly #backends = new Map<string, Backend>();
  readonly #ops = new Map<string, Class>();
  readonly #functions = new Map<string, FunctionInfo>();
  readonly #control: ReturnType<typeof setControl>;
  readonly #discover: boolean | string;
  #discovered = false;
  readonly #eager: boolean;
  #classifier: { version: number; of: Classifier | undefined } | undefined;
  /** The version at which registrations were last checked against the functions, and what was found. */
  #checked: { version: number; error: DispatchHookError | undefined } | undefined;

  constructor(options: BackendSetOptions) {
    const kinds = { name: "name", envPrefix: "string", env: "object", discover: "any", checkImplementations: ["eager", "lazy"] } as const;
    checkOptions(options, kinds, "createBackends()", ["name"]);
    this.name = options.name;
    const prefix = options.envPrefix ?? options.name.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
    this.#control = setControl(options.name, prefix, options.env ?? process.env);
    this.#discover = options.discover ?? true;
    this.#eager = options.checkImplementations === "eager";
    // A namespace of its own: its backends' tables never meet a framework's tables of the same name.
    this.registry = createRegistry({
      name: `backends of ${options.name}`,
      callSites: false,
      namespace: `backends:${options.name}#${++sets}`,
    });
  }

  /** @internal The op class that stands for a dispatchable function in the tables. */
  opFor(fn: string): Class {
    let op = this.#ops.get(fn);
    if (op === undefined) {
      op = { [fn]: class {} }[fn] as Class;
      this.#ops.set(fn, op);
    }
    return op;
  }

  /** @internal dispatchable() records its function for docs(). */
  describeFunction(info: FunctionInfo): void {
    this.#functions.set(info.name, info);
  }

  /** Generated documentation for every dispatchable function of the set, or for one. */
  docs(fn?: string): string {
    return formatDocs(
      this.name,
      [...this.#functions.values()].filter((f) => fn === undefined || f.name === fn),
      this.backends(),
    );
  }

  /** Declares a backend; its implementations are registered at once. */
  declare(declaration: BackendDeclaration<Fns>, declaredIn = "code"): void {
    checkOptions(declaration, declarationKinds, `declare(${JSON.stringify(declaration?.name)})`);
    const where = `Backend ${JSON.stringify(declaration.name)} of ${this.name}`;
    checkBackend(declaration.name, where);
    if (this.#backends.has(declaration.name)) {
      throw new DispatchHookError(
        "ERR_DISPATCH_BACKEND_DECLARATION",
        `${where} is declared twice (first in ${this.#backends.get(declaration.name)?.declaredIn}, again in ${declaredIn}). To fix: give one of them another name.`,
      );
    }
    const base = declaration.base ?? process.cwd();
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
      implementation: viaWraps === undefined ? own : (op) => own(op) ?? viaWraps(op),
    };
    const impls = Object.entries(declaration.implementations ?? {}).map(
      ([fn, impl]) => [fn, this.#implementation(impl, base, declaration.name, fn)] as const,
    );
    this.#checkNames(impls.map(([fn]) => ({ backend: declaration.name, fn })));
    // A declaration whose priorities close a cycle is refused here, not at the first call.
    sortBackends([...this.#backends.values(), backend]);
    this.#backends.set(declaration.name, backend);
    realmBackends().add(declaration.name);
    this.version++;
    this.registry.provide(declaration.name, table, { module: declaredIn });
    for (const [fn, impl] of impls) this.registry.register(declaration.name, this.opFor(fn), impl);
  }

  /**
   * Adds an implementation of `fn` to a backend (declared now or later). The handle undoes it. Given
   * the dispatchable itself (or a name in a typed set), the implementation is checked against its signature.
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
    const name = typeof fn === "string" ? fn : fn.name;
    const real = this.#implementation(impl, process.cwd(), backend, name);
    this.#checkNames([{ backend, fn: name }]);
    return this.registry.register(backend, this.opFor(name), real, options);
  }

  #implementation(impl: unknown, base: string, backend: string, fn: string): Implementation {
    const real = asImplementation(impl, base, backend, fn, this.#eager);
    if (real !== undefined) return real;
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_IMPL",
      `Backend ${JSON.stringify(backend)}: the implementation of ${fn} must be a function or "specifier#export", got ${describe(impl)}.`,
    );
  }

  /** Once the set has decided a call, its functions are known: a name near one of them is a typo. */
  #checkNames(names: ReadonlyArray<{ backend: string; fn: string }>): void {
    if (!this.#discovered) return;
    const error = unknownFunctions(this.name, names, new Set(this.#functions.keys()));
    if (error !== undefined) throw error;
  }

  /** Registrations made before the first decision, checked at it (and again after each change while one stands). */
  #checkRegistered(): void {
    if (this.#checked?.version !== this.version) {
      const names = [...this.#backends.values()].flatMap((b) =>
        [...this.#ops].filter(([, op]) => b.table.get(op) !== undefined).map(([fn]) => ({ backend: b.name, fn })),
      );
      this.#checked = { version: this.version, error: unknownFunctions(this.name, names, new Set(this.#functions.keys())) };
    }
    if (this.#checked.error !== undefined) throw this.#checked.error;
  }

  /**
   * Reads package.json declarations once, the first time the set decides anything. One the set
   * refuses is a warning with the refusal's code, and that backend is left out.
   */
  #readPackages(): void {
    if (this.#discovered) return;
    this.#discovered = true;
    if (this.#discover === false) return;
    for (const d of discover({ ...(typeof this.#discover === "string" ? { root: this.#discover } : {}), transitive: true }).dispatchables) {
      if (d.set !== this.name) continue;
      try {
        this.declare({ ...(d.declaration as object), name: d.backend, base: d.dir } as BackendDeclaration<Fns>, d.declaredIn);
      } catch (error) {
        const e = error as DispatchHookError;
        process.emitWarning(`${path.relative(process.cwd(), d.declaredIn) || d.declaredIn}: ${e.message} The backend is left out.`, {
          code: e.code,
        });
      }
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
