/**
 * Every error dispatch-hook throws, in one table. Each has a stable `code`; tests and users branch on
 * the code, never on the message. Messages say what happened and what to do next.
 */

export const errorCodes = {
  ERR_DISPATCH_NO_IMPL: "no implementation found for a dispatched type",
  ERR_DISPATCH_AMBIGUOUS: "two abstract types match and neither is more specific",
  ERR_DISPATCH_INCOMPLETE: "the audit found registrations that did not land",
  ERR_DISPATCH_INVALID_BACKEND: "a backend name is not a non-empty string",
  ERR_DISPATCH_RESERVED_NAME: "a name would collide with Object.prototype",
  ERR_DISPATCH_INVALID_OP_TYPE: "an op type is not a class",
  ERR_DISPATCH_INVALID_IMPL: "an implementation is not a function",
  ERR_DISPATCH_INVALID_OPTION: "an option is unknown or of the wrong type",
  ERR_DISPATCH_CONFLICT: "an op type already has an implementation on that backend",
  ERR_DISPATCH_SEALED: "the backend is sealed",
  ERR_DISPATCH_TABLE_SHAPE: "a provided table has no shape the registry can apply to",
  ERR_DISPATCH_REGISTRY_DISPOSED: "the registry was disposed",
  ERR_DISPATCH_INVALID_SNAPSHOT: "a snapshot from another registry was passed to restore()",
} as const;

export type ErrorCode = keyof typeof errorCodes;

export class DispatchHookError extends Error {
  readonly code: ErrorCode;
  /** Structured facts behind the message, for programs (for example the missed type). */
  declare readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    // Not enumerable: printed errors show the message and code, not a dump of classes.
    Object.defineProperty(this, "details", { value: Object.freeze({ ...options?.details }), enumerable: false });
  }

  override get name(): string {
    return `DispatchHookError [${this.code}]`;
  }
}

/** Short, safe description of any value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === "function") return value.name ? `function ${value.name}` : "anonymous function";
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (typeof value === "object") {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === null) return "object with null prototype";
    const ctor = (proto as { constructor?: unknown }).constructor;
    return typeof ctor === "function" && ctor.name ? `${ctor.name} instance` : "object";
  }
  return `${typeof value} ${String(value)}`;
}
