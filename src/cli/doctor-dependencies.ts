/** What doctor checks of the app's own dependencies. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The names in the app's `dependencies` that no node_modules from the app's directory up holds. */
export function uninstalled(root: string): string[] {
  let dependencies: unknown;
  try {
    dependencies = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies?: unknown }).dependencies;
  } catch {
    return []; // an unreadable package.json is a config problem of its own
  }
  if (typeof dependencies !== "object" || dependencies === null) return [];
  const installed = (name: string) => {
    for (let dir = root; ; dir = dirname(dir)) {
      if (existsSync(join(dir, "node_modules", name, "package.json"))) return true;
      if (dirname(dir) === dir) return false;
    }
  };
  return Object.keys(dependencies).filter((name) => !installed(name));
}
