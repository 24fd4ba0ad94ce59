/**
 * The rule for a new registration, given what its backend holds: refused (a sealed backend, or a
 * conflict without override), waiting behind the current owner (the same implementation again, or
 * a plugin's registration where the app overrode explicitly, whichever came first), or taking over.
 */
import type { Origin } from "./audit-events.js";
import type { CallSite } from "./call-site.js";
import type { Class, Impl } from "./dispatcher.js";
import type { Registration } from "./registration.js";
import { opName } from "./registry-input.js";

/** What register() was asked, with where it came from. */
export interface Request {
  readonly backend: string;
  readonly opType: Class;
  readonly impl: Impl;
  readonly override: boolean;
  /** Set when a plugin's registration module made it while its backend loaded. */
  readonly origin: Origin | undefined;
  readonly site: CallSite | undefined;
}

export type Admission =
  | { readonly action: "refuse"; readonly code: "ERR_DISPATCH_SEALED" | "ERR_DISPATCH_CONFLICT"; readonly message: string }
  | { readonly action: "wait"; readonly owner: Registration; readonly note: string }
  | { readonly action: "take" };

/** One object for the common answer: registering is the hot path. */
const take: Admission = Object.freeze({ action: "take" });

export function admit(request: Request, sealed: boolean, owner: Registration | undefined): Admission {
  const { backend, opType, impl, override, origin } = request;
  if (sealed) {
    return {
      action: "refuse",
      code: "ERR_DISPATCH_SEALED",
      message: `The ${backend} backend is sealed; ${opName(opType)} cannot be registered. The framework sealed it; register before it does.`,
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
    message: `${opName(opType)} already has an implementation on ${backend} (registration #${owner.id}${owner.origin === undefined ? "" : `, ${owner.origin.plugin}'s`}). Pass { override: true } to replace it, or dispose the other registration first.`,
  };
}
