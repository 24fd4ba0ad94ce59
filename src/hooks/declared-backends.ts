/**
 * Which of some backends the project's package.json files declare a dispatch module for (a named
 * backend, or a `{backend}` pattern whose module exists): for the exit audit of a thread with no
 * loader, where registrations wait for such a backend. Its table may be no `Dispatcher` (a Map), so
 * nothing in the thread can say whether it loaded and missed them: the audit says the loader is
 * missing instead of "never loaded". The main entry gives it to the exit audit (provideDeclared), which
 * the registry layer cannot import.
 */
import { fs, path, url } from "../builtins.js";
import type { WatchRule } from "./declarations.js";
import { discover } from "./discovery.js";

/** Backend → who declares it and where ("tensorlab: ./link/jax/dispatch/basic.js"), for those declared. */
export function declaredBackends(backends: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  if (backends.length === 0) return found;
  let rules: ReturnType<typeof discover>["rules"];
  try {
    rules = discover({ transitive: true }).rules;
  } catch {
    return found; // declarations that cannot be read say nothing here; the loader's reading of them would
  }
  for (const backend of backends) {
    const where = declarationOf(rules, backend);
    if (where !== undefined) found.set(backend, where);
  }
  return found;
}

/** Who declares `backend` and where, by `rules`: a rule naming it, or a `{backend}` pattern whose module exists in one of its roots. */
export function declarationOf(rules: readonly WatchRule[], backend: string): string | undefined {
  // A path joined, not a URL resolved: a backend name may hold "%", "#" or "?".
  const exists = (root: string, subpath: string) => {
    try {
      return fs.existsSync(path.join(url.fileURLToPath(root), subpath));
    } catch {
      return false;
    }
  };
  for (const rule of rules) {
    const subpath = rule.subpath.replaceAll("{backend}", backend);
    const pattern = rule.backend === undefined && rule.subpath.includes("{backend}");
    if (rule.backend !== backend && !pattern) continue;
    if (pattern && !rule.roots.some((root) => exists(root, subpath))) continue;
    return `${rule.packageName ?? rule.declaredIn}: ./${subpath}`;
  }
  return undefined;
}
