/**
 * What the registry's methods are given: the option and snapshot types, and the checks on what
 * register() and expect() receive. Each refusal has a code and changes nothing.
 */
import { type Class, type Impl, isClass } from "./dispatcher.js";
import { DispatchHookError, describe } from "./errors.js";
import { checkBackend } from "./names.js";
import { checkOptions } from "./options.js";
import { checkAdapter, type TableAdapter } from "./table-adapter.js";

export interface RegisterOptions {
  /** Replace an existing implementation of the op type on this backend. */
  readonly override?: boolean;
}

export interface ProvideMeta {
  /** The URL of the module instance the table belongs to. */
  readonly module?: string;
  /** "hook" when a loader signalled the module; "native" (default) when the framework calls announce() or registry.provide(). */
  readonly via?: "hook" | "native";
  /** How to read and write this table, when it is not a Dispatcher, a Map or register()-shaped. */
  readonly adapter?: TableAdapter;
}

export interface DeclareOptions {
  /** The adapter for every table of this backend. */
  readonly adapter?: TableAdapter;
}

export interface RegistryOptions {
  /** Record the caller's file:line for each registration (default: while an audit runs, DISPATCH_HOOK_AUDIT). */
  readonly callSites?: boolean;
  /** How the registry is named in a thread-wide audit (default "#n"). */
  readonly name?: string;
  /**
   * Which tables it takes in from the thread (default "dispatch", the frameworks' tables announced by
   * a loader or by announce()). A backend set's private registry has a namespace of its own.
   */
  readonly namespace?: string;
}

/** An opaque record of a registry's state, for restore(). */
export interface RegistrySnapshot {
  readonly live: ReadonlySet<number>;
  readonly sealed: ReadonlySet<string>;
}

export function opName(type: Class): string {
  return type.name || "(anonymous class)";
}

export function checkRegisterInput(backend: string, opType: Class, impl: Impl, options: RegisterOptions | undefined): void {
  checkBackend(backend, "register()");
  if (!isClass(opType)) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OP_TYPE",
      `register(${JSON.stringify(backend)}, …): the op type must be a class, got ${describe(opType)}.`,
    );
  }
  if (typeof impl !== "function") {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_IMPL",
      `register(${JSON.stringify(backend)}, ${opName(opType)}, …): the implementation must be a function, got ${describe(impl)}.`,
    );
  }
  checkOptions(options, { override: "boolean" }, `register(${JSON.stringify(backend)}, ${opName(opType)}, …)`);
}

export function checkExpectInput(backend: string, ops: readonly string[], source: string | undefined): void {
  checkBackend(backend, "expect()");
  if (!Array.isArray(ops) || ops.some((op) => typeof op !== "string" || op.length === 0)) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `expect(${JSON.stringify(backend)}, …): the op names must be an array of non-empty strings.`,
    );
  }
  if (source !== undefined && typeof source !== "string") {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `expect(): "source" must be a string, got ${describe(source)}.`);
  }
}

/** Checks provide()'s input; returns the adapter it names, if any. */
export function checkProvideInput(backend: string, meta: ProvideMeta | undefined): TableAdapter | undefined {
  checkBackend(backend, "provide()");
  const where = `provide(${JSON.stringify(backend)}, …)`;
  checkOptions(meta, { module: "string", via: ["hook", "native"], adapter: "object" }, where);
  return meta?.adapter === undefined ? undefined : checkAdapter(meta.adapter, where);
}

/** Checks declare()'s input; returns the adapter it names, if any. */
export function checkDeclareInput(backend: string, options: DeclareOptions): TableAdapter | undefined {
  checkBackend(backend, "declare()");
  const where = `declare(${JSON.stringify(backend)}, …)`;
  checkOptions(options, { adapter: "object" }, where);
  return options?.adapter === undefined ? undefined : checkAdapter(options.adapter, where);
}
