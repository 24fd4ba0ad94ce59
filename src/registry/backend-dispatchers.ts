/**
 * The Dispatchers made with a backend, in every copy of the thread, held weakly at the hub, and which
 * of them the program has used (looked up in, read). The audit names a used one that never reached
 * dispatch-hook (nothing announced it, no registry was given it), so that a plugin's registration
 * waiting for its backend is not said to wait "for a backend that never loaded" while the program uses
 * that backend's table. One made and never used (a framework's tables made up front for backends the
 * app never loads, a module that threw before announcing) says nothing there; in a process that lost
 * the audit's environment, any one says the loader was missed.
 */
import { hub } from "../hub.js";
import { signalChange } from "./audit-events.js";

/** Where a Dispatcher keeps its own reference, so that a registry given it (of any copy) can forget it. */
const ownRef = Symbol.for("dispatch-hook.stray-ref");

interface Made {
  /** At construction. */
  add(table: object): void;
  /** At its first use. */
  use(table: object): void;
  /** Given to a registry: it reached dispatch-hook, and is kept track of no more. */
  forget(table: object): void;
  /** Those alive, used ones only if `usedOnly`. */
  live(usedOnly: boolean): object[];
}

/** @internal */
export function backendDispatchers(): Made {
  return hub().shared<Made>("backend-dispatchers@3", () => {
    const refs = new Set<WeakRef<object>>();
    const used = new WeakSet<object>();
    // Each reference goes with its Dispatcher: nothing is kept after a drop.
    const gone = new FinalizationRegistry<WeakRef<object>>((ref) => refs.delete(ref));
    return {
      add(table) {
        const ref = new WeakRef(table);
        refs.add(ref);
        Object.defineProperty(table, ownRef, { value: ref, configurable: true });
        gone.register(table, ref, ref);
        signalChange();
      },
      use(table) {
        used.add(table);
        signalChange();
      },
      forget(table) {
        const ref = (table as { [ownRef]?: WeakRef<object> })[ownRef];
        if (ref === undefined || !refs.delete(ref)) return;
        gone.unregister(ref);
      },
      live: (usedOnly) => [...refs].flatMap((ref) => ref.deref() ?? []).filter((table) => !usedOnly || used.has(table)),
    };
  });
}
