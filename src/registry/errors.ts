/** Every error and warning dispatch-hook emits, each with a stable `code` to branch on (never the message). */

export const errorCodes = {
  ERR_DISPATCH_NO_IMPL: "no implementation found for a dispatched type",
  ERR_DISPATCH_AMBIGUOUS: "two abstract types match and neither is more specific",
  ERR_DISPATCH_INCOMPLETE: "the audit found registrations that did not land, or another problem",
  ERR_DISPATCH_NO_LOADER:
    "a backend the program needs has no table, and no loader or host adapter is installed in the thread that could make one signal",
  ERR_DISPATCH_INVALID_BACKEND: "a backend name is not a non-empty plain string",
  ERR_DISPATCH_RESERVED_NAME:
    "a backend name is __proto__, constructor or prototype, names that objects or classes already have, or a backend set's backend is named default, the reference implementation's name",
  ERR_DISPATCH_INVALID_OP_TYPE: "an op type is not a class",
  ERR_DISPATCH_INVALID_IMPL: "an implementation is not a function",
  ERR_DISPATCH_INVALID_OPTION:
    "an option or argument is unknown, of the wrong type or cannot be read, or args names a parameter whose name cannot be read",
  ERR_DISPATCH_CONFLICT:
    "an op type already has an implementation on that backend, or a backend set another dispatchable function of that name",
  ERR_DISPATCH_SEALED: "the backend is sealed",
  ERR_DISPATCH_TABLE_SHAPE: "a provided table has no shape the registry can apply to",
  ERR_DISPATCH_REGISTRY_DISPOSED: "the registry was disposed",
  ERR_DISPATCH_INVALID_SNAPSHOT: "a snapshot from another registry was passed to restore()",
  ERR_DISPATCH_HOOK_UNAVAILABLE: "the requested Node hook API does not exist on this Node version",
  ERR_DISPATCH_INVALID_SOURCE: "a transform was given something other than source text",
  ERR_DISPATCH_REGISTRATION_MODULE:
    "a plugin's registration module could not be loaded or did not finish, or a plugin expects op types on a backend it declares no registration module for",
  ERR_DISPATCH_CONFIG_INVALID: "a dispatchHook field has an unknown key or a value of the wrong type",
  ERR_DISPATCH_CONFIG_PATH: "a path in a dispatchHook field leaves its package",
  ERR_DISPATCH_CONFIG_JSON: "a package.json or config file is not valid JSON",
  ERR_DISPATCH_CONFIG_DUPLICATE: "a backend is declared twice with different modules",
  ERR_DISPATCH_MIXED_INPUTS: "the arguments' types belong to different backends and no single backend accepts them all",
  ERR_DISPATCH_PRIORITY_CYCLE: "backends' priority constraints form a cycle",
  ERR_DISPATCH_IMPL_LOAD: "a lazily named implementation could not be loaded",
  ERR_DISPATCH_UNKNOWN_FUNCTION: "an implementation is keyed by a name near one of the set's dispatchable functions, but not one of them",
  ERR_DISPATCH_UNKNOWN_BACKEND:
    "backendOptions() names a backend that no backend set in the realm declares, a control variable (<PREFIX>_PRIORITIZE, _BLOCK, _SET_ORDER) one that its set does not, or a plugin registers for a backend nothing declares",
  ERR_DISPATCH_CONVERT: "a wrapping backend's convert failed on an argument, or its restore on what the wrapped implementation returned",
  ERR_DISPATCH_TYPE_LOAD: 'an abstract type named "@specifier#Export" could not be loaded, or instanceof cannot ask its export',
  ERR_DISPATCH_PROTOCOL:
    "a backend's protocol type (an object with Symbol.hasInstance, or a loaded abstract type) threw when asked about a value",
  ERR_DISPATCH_TYPE_NOT_FOUND:
    'a named type ("specifier#Export") of a backend set names a module that does not resolve, or an export it does not define (found by doctor: at run time no value is ever of that type)',
  ERR_DISPATCH_BACKEND_DECLARATION: "a backend declaration is malformed or names a backend twice",
  ERR_DISPATCH_MODULE_NOT_FOUND: "a declared dispatch module, or the package it is declared for, is not where its declaration says",
  ERR_DISPATCH_MODULE_LOAD: "a declared dispatch module threw or failed to load (doctor --load)",
  ERR_DISPATCH_NO_BACKENDS: "no package.json or config file of the project declares a backend, so the loader would watch nothing",
  ERR_DISPATCH_LOADER:
    "the loader or a host adapter could not serve a dispatch module, or a copy of dispatch-hook of another hub version runs apart from this one",
  ERR_DISPATCH_AUDIT_UNREADABLE: "doctor --load's child wrote no audit record, or one that cannot be read",
  ERR_DISPATCH_HOOK_AUDIT_DIR:
    "the command line cannot create or write the run directory it was given, or that directory holds an earlier run's records",
  ERR_DISPATCH_HOOK_AUDIT_FILE: "the command line cannot write the JSON file --json-file names",
} as const;

/** Warnings, emitted with process.emitWarning and these codes. */
export const warningCodes = {
  DISPATCH_HOOK_INSTRUMENT_FAILED: "a watched module could not be instrumented; it loaded unchanged",
  DISPATCH_HOOK_CONFIG_LATE: "module.register's hooks thread did not report its config in time; answers leave it out until it does",
  DISPATCH_HOOK_AUDIT_MODE: "DISPATCH_HOOK_AUDIT holds a value it does not accept; the audit stays off",
  DISPATCH_HOOK_AUDIT_RECORD: "a process cannot write its audit record into the run directory (DISPATCH_HOOK_AUDIT_DIR); it is not audited",
  DISPATCH_HOOK_AUDIT_RECORD_EARLY:
    "dispatch-hook was first loaded inside a test; the test file's audit (its record, and DISPATCH_HOOK_AUDIT's verdict, which cannot fail the file from there) is taken right after, and misses what later tests register",
  DISPATCH_HOOK_HUB_VERSION:
    "another copy of dispatch-hook speaks no hub version this one knows; it runs on a hub of its own (install one version)",
  DISPATCH_HOOK_HUB_HANDSHAKE: "a message on the hub's channel is not a handshake; it was ignored",
  DISPATCH_HOOK_VITE_EXTERNAL:
    "a CommonJS package that declares dispatch or registration modules is left to Node by Vite's SSR: run the loader as well",
  DISPATCH_HOOK_TABLE_REJECTED: "a dispatch module's table is not one the registry can write to; its registrations wait",
  DISPATCH_HOOK_REGISTRATION_FAILED:
    "a plugin's registration module threw while a CommonJS dispatch module that require() loaded ran it; the module loaded without what it registers",
} as const;

export type ErrorCode = keyof typeof errorCodes;
export type ConfigErrorCode = Extract<ErrorCode, `ERR_DISPATCH_CONFIG_${string}`>;
export type WarningCode = keyof typeof warningCodes;

/**
 * The brand every copy of dispatch-hook puts on its errors: one symbol for the whole isolate, so
 * that `instanceof DispatchHookError` holds across the ES and CommonJS entries, the bundles of the
 * subpath entries, two installed copies, and vm realms.
 */
const brand: unique symbol = Symbol.for("dispatch-hook.error") as never;

export class DispatchHookError extends Error {
  readonly code: ErrorCode;

  /** True for an error of any copy of dispatch-hook (see `brand`). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as { [brand]?: unknown })[brand] === true;
  }
  /** Structured facts behind the message, for programs (for example the missed type). */
  declare readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    Object.defineProperty(this, brand, { value: true });
    // Not enumerable: printed errors show the message and code, not a dump of classes.
    Object.defineProperty(this, "details", { value: Object.freeze({ ...options?.details }), enumerable: false });
  }

  override get name(): string {
    return `DispatchHookError [${this.code}]`;
  }
}

/** Short, safe description of any value for error messages. */
export function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "function") {
    try {
      return value.name ? `function ${value.name}` : "anonymous function";
    } catch {
      return "a function that cannot be read (a revoked proxy?)";
    }
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "object") {
    let proto: unknown;
    try {
      if (Array.isArray(value)) return "an array";
      proto = Object.getPrototypeOf(value);
    } catch {
      // Only a proxy throws here, and only a revoked one.
      return "an object that cannot be read (a revoked proxy?)";
    }
    if (proto === null) return "object with null prototype";
    try {
      const ctor = (proto as { constructor?: unknown }).constructor;
      return typeof ctor === "function" && ctor.name ? `${ctor.name} instance` : "object";
    } catch {
      return "object";
    }
  }
  return `${typeof value} ${String(value)}`;
}

/**
 * Says `error` as a process warning (its message, or `message`) with its code, as an object, so that
 * a "warning" listener gets the facts (`details`) too.
 */
export function warnAs(error: DispatchHookError, message = error.message): void {
  process.emitWarning(Object.assign(new Error(message), { name: "Warning", code: error.code, details: error.details }));
}
