/**
 * The backends a program named to assertComplete() in this thread: it is about to use them. Kept
 * at the thread's hub, so that the exit audit of any copy of the package holds the program to them
 * even when it caught the error, and bounded by the number of backend names.
 */
import { hub } from "../hub.js";

export function assertedBackends(): Set<string> {
  return hub().shared("asserted-backends@1", () => new Set<string>());
}
