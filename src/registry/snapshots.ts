/** Registry snapshots: which registrations were live and which backends sealed, and whose they are. */
import type { BackendState } from "./backend-state.js";
import { DispatchHookError } from "./errors.js";
import type { Registration } from "./registration.js";
import type { RegistrySnapshot } from "./registry-input.js";

const owners = new WeakMap<RegistrySnapshot, object>();

export function takeSnapshot(owner: object, registrations: readonly Registration[], backends: Iterable<BackendState>): RegistrySnapshot {
  const live = new Set(registrations.filter((r) => r.state !== "disposed").map((r) => r.id));
  const sealed = new Set([...backends].filter((b) => b.sealed).map((b) => b.name));
  const snapshot: RegistrySnapshot = Object.freeze({ live, sealed });
  owners.set(snapshot, owner);
  return snapshot;
}

/** Throws ERR_DISPATCH_INVALID_SNAPSHOT unless `owner` took `snapshot`. */
export function checkSnapshot(owner: object, snapshot: RegistrySnapshot): void {
  if (owners.get(snapshot) !== owner) {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_SNAPSHOT", "restore() needs a snapshot taken from this registry with snapshot().");
  }
}
