/**
 * What a backend set's methods are given: the declaration and option types, and the checks on what
 * they receive (each refusal has a code and changes nothing; each option is read once).
 */
import { DispatchHookError, describe } from "../registry/errors.js";
import { readOptions } from "../registry/options.js";
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

/** How declare() names itself in a refusal: with the backend's name, when it can be read. */
function declareLabel(declaration: unknown): string {
  try {
    return `declare(${JSON.stringify((declaration as { name?: unknown } | undefined)?.name)})`;
  } catch {
    return "declare()";
  }
}

/** The name of the function register() was given: a dispatchable (or anything with a name), or the name itself. */
export function functionName(fn: unknown, where: string): string {
  let name: unknown = fn;
  try {
    if ((typeof fn === "object" && fn !== null) || typeof fn === "function") name = (fn as { name?: unknown }).name;
  } catch (error) {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `${where}: the function's name cannot be read.`, { cause: error });
  }
  if (typeof name === "string" && name !== "") return name;
  throw new DispatchHookError(
    "ERR_DISPATCH_INVALID_OPTION",
    `${where}: the function must be a dispatchable or its name, got ${describe(fn)}${fn === name ? "" : ` named ${describe(name)}`}.`,
  );
}

/** declare()'s declaration, checked and read once. */
export function readDeclaration<Fns extends FunctionMap>(given: BackendDeclaration<Fns>): BackendDeclaration<Fns> {
  return readOptions(given, declarationKinds, declareLabel(given)) as unknown as BackendDeclaration<Fns>;
}

/** createBackends()'s options, checked and read once. */
export function readSetOptions(options: BackendSetOptions): BackendSetOptions {
  const kinds = { name: "name", envPrefix: "string", env: "object", discover: "any", checkImplementations: ["eager", "lazy"] } as const;
  const read = readOptions(options, kinds, "createBackends()", ["name"]) as unknown as BackendSetOptions;
  const discover = read.discover;
  if (discover !== undefined && typeof discover !== "boolean" && (typeof discover !== "string" || discover === "")) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `createBackends(): "discover" must be a boolean or a directory (a non-empty string), got ${describe(discover)}.`,
    );
  }
  return read;
}
