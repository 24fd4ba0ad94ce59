/**
 * The Dispatchers made with a backend, in every copy of the thread, held weakly at the hub. The audit
 * names one that never reached dispatch-hook (nothing announced it, no registry was given it), so that
 * a plugin's registration waiting for its backend is not said to wait "for a backend that never
 * loaded" while that backend's table sits in memory. Dead references are swept as the set grows.
 */
import { hub } from "../hub.js";

interface Made {
  add(table: object): void;
  live(): object[];
}

/** @internal */
export function backendDispatchers(): Made {
  return hub().shared<Made>("backend-dispatchers@1", () => {
    let refs = new Set<WeakRef<object>>();
    let sweepAt = 64;
    return {
      add(table) {
        refs.add(new WeakRef(table));
        if (refs.size < sweepAt) return;
        refs = new Set([...refs].filter((ref) => ref.deref() !== undefined));
        sweepAt = Math.max(64, refs.size * 2);
      },
      live: () => [...refs].flatMap((ref) => ref.deref() ?? []),
    };
  });
}

/** Tables given to a registry with provide(), by any copy: they reached dispatch-hook. @internal */
export function providedTables(): WeakSet<object> {
  return hub().shared("provided-tables@1", () => new WeakSet<object>());
}
