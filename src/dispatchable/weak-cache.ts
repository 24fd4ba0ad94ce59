/**
 * A cache keyed by objects (prototypes, scope keys), held weakly: a class that goes takes its
 * decisions with it. A weak map keeps the capacity it grew to after its keys are collected (V8 does
 * not shrink it), so a program that mints classes without end would keep a table sized for all of
 * them: after `CAPACITY` new keys the map starts over, and the keys still in use are decided
 * again. `null` (a null-prototype object's prototype) has a slot of its own.
 */
export class WeakCache<V> {
  static readonly CAPACITY = 1024;
  #weak = new WeakMap<object, V>();
  #added = 0;
  #none: V | undefined;

  get(key: object | null): V | undefined {
    return key === null ? this.#none : this.#weak.get(key);
  }

  set(key: object | null, value: V): void {
    if (key === null) {
      this.#none = value;
      return;
    }
    if (++this.#added > WeakCache.CAPACITY) {
      this.#weak = new WeakMap();
      this.#added = 1;
    }
    this.#weak.set(key, value);
  }
}
