/** What doctor checks of the app's own dependencies. */
import { join } from "node:path";
import { findPackage, readJson } from "../hooks/package-scope.js";

/** The names in the app's `dependencies` that no node_modules from the app's directory up holds (found as Node would). */
export function uninstalled(root: string): string[] {
  const json = readJson(join(root, "package.json"));
  // An unreadable package.json is a config problem of its own.
  const dependencies = json.ok ? (json.value as { dependencies?: unknown } | null)?.dependencies : undefined;
  if (typeof dependencies !== "object" || dependencies === null) return [];
  return Object.keys(dependencies).filter((name) => findPackage(root, name) === undefined);
}
