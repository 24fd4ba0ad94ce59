/**
 * What a backend set's methods are given: the declaration and option types, and the checks on what
 * they receive (each refusal has a code and changes nothing; each option is read once).
 */
import { fs, path, url } from "../builtins.js";
import { discover } from "../hooks/discovery.js";
import { DispatchHookError, describe, warnAs } from "../registry/errors.js";
import { controlSeparators, distance, readOptions } from "../registry/options.js";
import type { Registry } from "../registry/registry.js";
import type { AnyFunction, ImplementationOf } from "./impl-table.js";
import type { TypeSpec } from "./type-match.js";
import type { Wraps } from "./wrapping.js";

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
  /** Where relative `"./specifier#…"` names resolve from: a directory, or a module's URL or path (`import.meta.url`); default: the working directory (for package.json, the package's). */
  readonly base?: string;
  /** Runs another backend's implementations on converted arguments. */
  readonly wraps?: Wraps;
}

export interface BackendSetOptions {
  /** The set's name: package.json declarations under `dispatchables.<name>` belong to it. */
  readonly name: string;
  /** The prefix of the control variables: `<prefix>_PRIORITIZE`, `_BLOCK`, `_SET_ORDER` (default: the name, upper-cased); letters, digits and underscores. */
  readonly envPrefix?: string;
  /** The environment to read (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Read package.json declarations (default true); a string is the app's directory. */
  readonly discover?: boolean | string;
  /** "eager": load `"specifier#export"` implementations at registration, so a typo fails there (default "lazy"). */
  readonly checkImplementations?: "eager" | "lazy";
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

/** What a refusal of a set's declare() or register() concerns: the backend (when its name can be read), and the function (when one). */
export interface Concerning {
  backend?: string | undefined;
  function?: string | undefined;
}

/**
 * Runs `run`; a DispatchHookError it throws gets the set's name, and the backend and the function
 * `at` names when it throws, in its details (what the error says itself wins).
 */
export function withDetails<T>(set: string, at: Concerning, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (!(error instanceof DispatchHookError)) throw error;
    const added: Record<string, unknown> = { set };
    if (at.backend !== undefined) added.backend = at.backend;
    if (at.function !== undefined) added.function = at.function;
    if (Object.keys(added).every((key) => Object.hasOwn(error.details, key))) throw error;
    const details = { ...added, ...error.details };
    throw new DispatchHookError(error.code, error.message, { details, ...(error.cause === undefined ? {} : { cause: error.cause }) });
  }
}

/** The name of the function register() was given: a dispatchable (or anything with a name), or the name itself. */
export function functionName(fn: unknown, where: string, set: { readonly name: string }): string {
  let name: unknown = fn;
  let owner: { name?: unknown; opFor?: unknown } | undefined;
  try {
    if ((typeof fn === "object" && fn !== null) || typeof fn === "function") name = (fn as { name?: unknown }).name;
    if (typeof fn === "function") owner = (fn as { backends?: typeof owner }).backends;
  } catch (error) {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `${where}: the function's name cannot be read.`, { cause: error });
  }
  // Another set's dispatchable (of any copy) names that set's function: registered here, it would quietly become this set's.
  if (typeof owner?.opFor === "function" && owner !== set)
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${where}: ${String(name)} is a function of the set ${String(owner.name)}, not of ${set.name}.`,
    );
  if (typeof name === "string" && name !== "") return name;
  throw new DispatchHookError(
    "ERR_DISPATCH_INVALID_OPTION",
    `${where}: the function must be a dispatchable or its name, got ${describe(fn)}${fn === name ? "" : ` named ${describe(name)}`}.`,
  );
}

/**
 * declare()'s declaration, checked and read once; `at.backend` is its name as soon as it can be read
 * (a string), so that a refusal of another option names the backend too.
 */
export function readDeclaration<Fns extends FunctionMap>(given: BackendDeclaration<Fns>, at: Concerning): BackendDeclaration<Fns> {
  let label = "declare()";
  try {
    const name = (given as { name?: unknown } | undefined)?.name;
    label = `declare(${JSON.stringify(name)})`;
    if (typeof name === "string") at.backend = name;
  } catch {
    // A name that cannot be read: readOptions() says so.
  }
  const read = readOptions(given, declarationKinds, label) as unknown as BackendDeclaration<Fns>;
  at.backend = read.name;
  // A name holding either could never be named in the control variables.
  if (controlSeparators.test(read.name)) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_BACKEND",
      `${label}: a backend of a set cannot have "," or ">" in its name: the environment variables that control the set separate names with them.`,
    );
  }
  // A declaration that contradicts itself is refused here, not at the later declare() of the backend it names.
  const [above, below] = [read.higherPriorityThan ?? [], read.lowerPriorityThan ?? []];
  const both = above.find((n) => below.includes(n));
  if (both !== undefined || [...above, ...below].includes(read.name)) {
    const what =
      both === undefined
        ? "the backend names itself in its priorities"
        : `${JSON.stringify(both)} is in both higherPriorityThan and lowerPriorityThan`;
    throw new DispatchHookError("ERR_DISPATCH_PRIORITY_CYCLE", `${label}: ${what}. To fix: drop one of them.`);
  }
  return read;
}

/**
 * The directory a declaration's relative names resolve from: `base` as a directory, or the directory
 * of a module given by its URL or path (`import.meta.url`, `__filename`); the working directory by default.
 */
export function baseDirectory(base: string | undefined): string {
  if (base === undefined) return process.cwd();
  const at = base.startsWith("file:") ? url.fileURLToPath(base) : path.resolve(base);
  return fs.statSync(at, { throwIfNoEntry: false })?.isFile() === true ? path.dirname(at) : at;
}

/** createBackends()'s options, checked and read once. */
export function readSetOptions(options: BackendSetOptions): BackendSetOptions {
  const kinds = { name: "name", envPrefix: "string", env: "object", discover: "any", checkImplementations: ["eager", "lazy"] } as const;
  // An option of declare() given here ("base", "implementations"): the nearest option of createBackends() would mislead.
  let read: BackendSetOptions;
  try {
    read = readOptions(options, kinds, "createBackends()", ["name"]) as unknown as BackendSetOptions;
  } catch (error) {
    let misplaced: string | undefined;
    try {
      misplaced = Object.keys(options).find((key) => !(key in kinds) && key in declarationKinds);
    } catch {} // options that cannot be read: the error says so
    if (misplaced === undefined) throw error;
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `createBackends(): ${JSON.stringify(misplaced)} is an option of each backend's declare(), not of createBackends(): set.declare({ name, ${misplaced}, … }).`,
      { cause: error },
    );
  }
  if (read.envPrefix !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(read.envPrefix)) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `createBackends(): "envPrefix" must be letters, digits and underscores, not starting with a digit (it begins environment variable names), got ${JSON.stringify(read.envPrefix)}.`,
    );
  }
  const discover = read.discover;
  if (discover !== undefined && typeof discover !== "boolean" && (typeof discover !== "string" || discover === "")) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `createBackends(): "discover" must be a boolean or a directory (a non-empty string), got ${describe(discover)}.`,
    );
  }
  return read;
}

let packageBackends: Set<string> | undefined;

/**
 * Every backend name the package.json files of the project declare for any set, read once, when a scope names
 * a backend no set of the realm has declared yet: a set declares its package.json backends at its first call,
 * so whether such a name was known must not depend on which set was called first.
 */
export function declaredInPackages(name: string): boolean {
  packageBackends ??= new Set(discover({ transitive: true }).dispatchables.map((d) => d.backend));
  return packageBackends.has(name);
}

/** A package.json declaration for a set whose name is a typo away from this set's (see strayDeclarations). */
export interface StrayDeclaration {
  readonly set: string;
  readonly backend: string;
  readonly declaredIn: string;
  readonly near: string;
}

/**
 * Declares set `set`'s backends that package.json files declare (`discover`: true, or the app's
 * directory) with `declare`; one it refuses is left out: a warning, and a problem of its audit.
 * Returns the declarations for a set name a typo away from `set`'s.
 */
export function declarePackages(
  into: { readonly name: string; readonly registry: Registry; declare(declaration: BackendDeclaration, declaredIn: string): void },
  root: true | string,
): StrayDeclaration[] {
  const { name: set, registry } = into;
  const stray: StrayDeclaration[] = [];
  for (const d of discover({ ...(typeof root === "string" ? { root } : {}), transitive: true }).dispatchables) {
    if (d.set !== set) {
      // One edit (two in a long name): set names are short, and "dct" is two from "fft".
      const near = distance(d.set.toLowerCase(), set.toLowerCase()) <= (Math.min(d.set.length, set.length) >= 8 ? 2 : 1);
      if (near) stray.push({ set: d.set, backend: d.backend, declaredIn: d.declaredIn, near: set });
      continue;
    }
    try {
      into.declare({ ...(d.declaration as object), name: d.backend, base: d.dir } as BackendDeclaration, d.declaredIn);
    } catch (error) {
      const e = error as DispatchHookError;
      const message = `${path.relative(process.cwd(), d.declaredIn) || d.declaredIn}: ${e.message} The backend is left out.`;
      warnAs(e, message);
      registry.setEvent({ kind: "declaration", backend: d.backend, code: e.code, message });
    }
  }
  return stray;
}
