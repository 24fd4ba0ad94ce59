/**
 * The Dispatchers made with a backend, in every copy of the thread, held weakly at the hub. The audit
 * names one that never reached dispatch-hook (nothing announced it, no registry was given it), so that
 * a plugin's registration waiting for its backend is not said to wait "for a backend that never
 * loaded" while that backend's table sits in memory.
 */
import { hub } from "../hub.js";

interface Made {
  add(table: object): void;
  live(): object[];
}

/** @internal */
export function backendDispatchers(): Made {
  return hub().shared<Made>("backend-dispatchers@1", () => {
    const refs = new Set<WeakRef<object>>();
    // Each reference goes with its Dispatcher: nothing is kept after a drop.
    const gone = new FinalizationRegistry<WeakRef<object>>((ref) => refs.delete(ref));
    return {
      add(table) {
        const ref = new WeakRef(table);
        refs.add(ref);
        gone.register(table, ref);
      },
      live: () => [...refs].flatMap((ref) => ref.deref() ?? []),
    };
  });
}

/** Tables given to a registry with provide(), by any copy: they reached dispatch-hook. @internal */
export function providedTables(): WeakSet<object> {
  return hub().shared("provided-tables@1", () => new WeakSet<object>());
}
