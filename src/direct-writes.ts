/**
 * Which registration window wrote a table's entry through a Dispatcher (of any copy), noted as it
 * is written, so that the audit credits a direct write to the plugin whose module made it even
 * when several registration modules await at once (runtime/window.ts). Kept at the hub, weakly.
 */
import { hub } from "./hub.js";

type Writers = WeakMap<object, Map<unknown, string>>;

const writers = (): Writers => hub().shared<Writers>("direct-writers@1", () => new WeakMap());

/** Called by a Dispatcher's register(): notes the window the running code belongs to, if any. */
export function noteWrite(table: object, key: unknown): void {
  const window = hub().currentWindow();
  if (window === undefined) return;
  const all = writers();
  const byKey = all.get(table) ?? new Map<unknown, string>();
  byKey.set(key, window.id);
  all.set(table, byKey);
}

/** The window that last wrote this entry through a Dispatcher, by id, if one did. */
export const writerOf = (table: object, key: unknown): string | undefined => writers().get(table)?.get(key);
