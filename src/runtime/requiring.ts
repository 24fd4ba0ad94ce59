/**
 * The originals a CommonJS facade is requiring now, shared through the hub with the hooks: a
 * require() cycle back to such a module gets the module itself (see hooks/module-facts.ts).
 */
import { hub } from "../hub.js";

export function loadingOriginals(): Set<string> {
  return hub().shared("cjs-facade-requiring@1", () => new Set<string>());
}

/** Generated code: the CommonJS facade of `url` starts (`on`) or has finished requiring its original. */
export function requiring(url: string, on: boolean): void {
  if (on) loadingOriginals().add(url);
  else loadingOriginals().delete(url);
}
