/** A live, read-only view of a Map: reads go through, and nothing on it can write. */
export function readonlyView<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const view: ReadonlyMap<K, V> = Object.freeze({
    get size() {
      return map.size;
    },
    get: (key: K) => map.get(key),
    has: (key: K) => map.has(key),
    keys: () => map.keys(),
    values: () => map.values(),
    entries: () => map.entries(),
    forEach: (fn: (value: V, key: K, view: ReadonlyMap<K, V>) => void, thisArg?: unknown) => {
      for (const [key, value] of map) fn.call(thisArg, value, key, view);
    },
    [Symbol.iterator]: () => map.entries(),
    [Symbol.toStringTag]: "ReadonlyMap",
  });
  return view;
}
