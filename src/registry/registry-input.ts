/**
 * What the registry's methods are given: the option and snapshot types, the checks on what they
 * receive (each refusal has a code and changes nothing), and the rule that admits a registration.
 */
import type { TableNotice } from "../channel.js";
import { keyName } from "../table-reads.js";
import type { Origin } from "./audit-events.js";
import type { CallSite } from "./call-site.js";
import { type Class, type Impl, isClass } from "./dispatcher.js";
import { DispatchHookError, describe } from "./errors.js";
import { checkBackend, readOptions } from "./options.js";
import type { Registration } from "./registration.js";
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
  /** Registrations that were pending, applied, failed or waiting: brought back if disposed since. */
  readonly live: ReadonlySet<number>;
  /** Registrations refused then: kept as they are, never brought back (they did not land). */
  readonly refused: ReadonlySet<number>;
  readonly sealed: ReadonlySet<string>;
  /** Op types named with expect(), by backend, and where. */
  readonly expected: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

/** Checks register()'s input; returns whether it overrides (read once from the options). */
export function checkRegisterInput(backend: string, opType: Class, impl: Impl, options: RegisterOptions | undefined): boolean {
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
      `register(${JSON.stringify(backend)}, ${keyName(opType)}, …): the implementation must be a function, got ${describe(impl)}.`,
    );
  }
  // No options, nothing to read: the message that names the call is built only for options to check.
  if (options === undefined) return false;
  return readOptions(options, { override: "boolean" }, `register(${JSON.stringify(backend)}, ${keyName(opType)}, …)`).override === true;
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

/** Checks provide()'s input; returns what it read of the meta, and the adapter it names, if any. */
export function checkProvideInput(
  backend: string,
  meta: ProvideMeta | undefined,
): { meta: ProvideMeta | undefined; adapter: TableAdapter | undefined } {
  checkBackend(backend, "provide()");
  const where = `provide(${JSON.stringify(backend)}, …)`;
  const read: ProvideMeta = readOptions(meta, { module: "string", via: ["hook", "native"], adapter: "object" }, where);
  return {
    meta: meta === undefined ? undefined : read,
    adapter: read.adapter === undefined ? undefined : checkAdapter(read.adapter, where),
  };
}

/** Checks declare()'s input; returns the adapter it names, if any. */
export function checkDeclareInput(backend: string, options: DeclareOptions): TableAdapter | undefined {
  checkBackend(backend, "declare()");
  const where = `declare(${JSON.stringify(backend)}, …)`;
  const read: DeclareOptions = readOptions(options, { adapter: "object" }, where);
  return read.adapter === undefined ? undefined : checkAdapter(read.adapter, where);
}

/** What register() was asked, with where it came from. @internal */
export interface Request {
  readonly backend: string;
  readonly opType: Class;
  readonly impl: Impl;
  readonly override: boolean;
  /** Set when a plugin's registration module made it while its backend loaded. */
  readonly origin: Origin | undefined;
  /** A captured frame, or a site given as text (the package.json that declared it). */
  readonly site: CallSite | string | undefined;
}

type Admission =
  | { readonly action: "refuse"; readonly code: "ERR_DISPATCH_SEALED" | "ERR_DISPATCH_CONFLICT"; readonly message: string }
  | { readonly action: "wait"; readonly owner: Registration; readonly note: string }
  | { readonly action: "take" };

/** One object for the common answer: registering is the hot path. */
const take: Admission = Object.freeze({ action: "take" });

/**
 * A new registration, given what its backend holds: refused (sealed, or a conflict without override),
 * waiting behind the current owner (the same implementation again, or a plugin's registration where
 * the app overrode explicitly, whichever came first), or taking over.
 * @internal
 */
export function admit(request: Request, sealed: boolean, owner: Registration | undefined): Admission {
  const { backend, opType, impl, override, origin } = request;
  if (sealed) {
    return {
      action: "refuse",
      code: "ERR_DISPATCH_SEALED",
      message: `The ${backend} backend is sealed; ${keyName(opType)} cannot be registered. The framework sealed it; register before it does.`,
    };
  }
  if (owner === undefined) return take;
  // The same implementation again: its own handle, waiting behind the first, so that disposing one
  // leaves the other in place.
  if (owner.impl === impl) return { action: "wait", owner, note: "the same implementation" };
  // An app's explicit override wins over a plugin's declarative registration, whichever comes first.
  if (origin !== undefined && owner.origin === undefined && owner.override)
    return { action: "wait", owner, note: "the app's explicit override wins" };
  if (override) return take;
  return {
    action: "refuse",
    code: "ERR_DISPATCH_CONFLICT",
    message:
      owner.state === "failed"
        ? `${keyName(opType)} is registered on ${backend} already (registration #${owner.id}${owner.origin === undefined ? "" : `, ${owner.origin.plugin}'s`}), which failed to apply: dispose it first, or pass { override: true } to replace it.`
        : `${keyName(opType)} already has an implementation on ${backend} (registration #${owner.id}${owner.origin === undefined ? "" : `, ${owner.origin.plugin}'s`}). Pass { override: true } to replace it, or dispose the other registration first.`,
  };
}

/** Tables whose rejection was said: every registry that listens rejects it, and it is said once. */
const warned = new WeakSet<object>();

/** Why a table announced in the thread cannot be used: the message of its "rejected" event, also said once as a warning. */
export function rejection(notice: TableNotice, error: unknown): string {
  const what = notice.via === "hook" ? `its export ${JSON.stringify(notice.exportName)}` : "the table it provided";
  const reason = error instanceof Error ? error.message : String(error);
  const message = `${notice.module ?? "a module"} signalled backend ${JSON.stringify(notice.backend)}, but ${what} could not be used: ${reason}`;
  const target = notice.via === "hook" ? notice.exports : notice.table;
  if (typeof target === "object" && target !== null && !warned.has(target)) {
    warned.add(target);
    process.emitWarning(`${message} Registrations for it wait; none is lost.`, { code: "DISPATCH_HOOK_TABLE_REJECTED" });
  }
  return message;
}
