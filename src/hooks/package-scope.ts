/**
 * Package scopes on disk: the nearest package.json above a file, and a dependency's directory as
 * Node would find it (node_modules from the package upwards, which also covers workspaces and
 * pnpm's store). And the shape checks of what a package.json declares: a package name, a plain
 * object, a path that stays inside its package.
 */
import { fs, path, url } from "../builtins.js";

// Spelled-out letter ranges rather than the i flag: a case-insensitive expression makes V8 build
// Unicode case-folding sets when it is compiled (about a tenth of a millisecond at start-up).
const nameSegment = /^(?:@[A-Za-z0-9._~-]+\/)?[A-Za-z0-9._~-]+$/;
const drivePath = /^[A-Za-z]:[\\/]/;
const schemePrefix = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export function isPackageName(name: string): boolean {
  return nameSegment.test(name);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A package-relative path that stays inside its package (no absolute path, no `..` out, no NUL), normalised without "./"; or a reason. */
export function packagePath(value: string): { ok: true; path: string } | { ok: false; reason: string } {
  if (value.length === 0) return { ok: false, reason: "is empty" };
  if (path.isAbsolute(value) || drivePath.test(value) || value.startsWith("\\") || schemePrefix.test(value)) {
    return { ok: false, reason: "is absolute; it must be relative to the package, like ./dispatch/numba.js" };
  }
  const normal = path.posix.normalize(value.replaceAll("\\", "/"));
  if (normal === ".." || normal.startsWith("../")) return { ok: false, reason: "leaves the package; it must point inside it" };
  if (value.includes("\0")) return { ok: false, reason: "contains a NUL character" };
  return { ok: true, path: normal.replace(/^\.\//, "") };
}

export interface PackageJson {
  readonly name?: unknown;
  readonly dispatchHook?: unknown;
  readonly dependencies?: unknown;
  readonly devDependencies?: unknown;
  readonly optionalDependencies?: unknown;
  readonly peerDependencies?: unknown;
}

export function readJson(file: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(fs.readFileSync(file, "utf8")) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

export function realDir(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * Finds `node_modules/<name>` from `start` upwards, as Node would, and reads its package.json in the
 * same step: one system call per level tried, where a check and then a read would take two.
 */
export function findPackage(start: string, name: string): { dir: string; json: ReturnType<typeof readJson> } | undefined {
  // Joined by hand: `dir` is already normal, and so is a package name that does not start with a
  // dot. path.join would normalise every candidate again, and at start-up, in a fresh hooks thread,
  // that costs more than the reads.
  const plain = !name.startsWith(".");
  // A scoped name's slash, in the platform's separator, as path.join would write it.
  const own = path.sep === "/" ? name : name.replaceAll("/", path.sep);
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = plain
      ? `${dir.endsWith(path.sep) ? dir : dir + path.sep}node_modules${path.sep}${own}`
      : path.join(dir, "node_modules", name);
    try {
      return { dir: candidate, json: { ok: true, value: JSON.parse(fs.readFileSync(`${candidate}${path.sep}package.json`, "utf8")) } };
    } catch (error) {
      // Not there: look further up. Unreadable, or not JSON (a SyntaxError has no code): found, with why.
      const code = (error as { code?: unknown }).code;
      if (code !== "ENOENT" && code !== "ENOTDIR")
        return { dir: candidate, json: { ok: false, error: error instanceof Error ? error.message : String(error) } };
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The nearest directory at or above `start` that has a package.json. */
export function findPackageRoot(start: string): string | undefined {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The names a package depends on at run time (and, for the app itself, in development too). */
export function dependencyNames(json: PackageJson, withDev: boolean): string[] {
  const out = new Set<string>();
  const groups = [json.dependencies, json.optionalDependencies, json.peerDependencies, withDev ? json.devDependencies : undefined];
  for (const group of groups) {
    if (typeof group === "object" && group !== null && !Array.isArray(group)) for (const name of Object.keys(group)) out.add(name);
  }
  return [...out];
}

/**
 * A module's format from its name and its package's "type" (`types` caches it per directory): what
 * Node decides, for when its hooks do not say. TypeScript too (type stripping, Node 22.18+): .mts
 * and .cts are fixed, .ts follows the package.
 */
export function moduleFormat(href: string, types: Map<string, "module" | "commonjs">): "module" | "commonjs" | undefined {
  const clean = href.replace(/[?#].*$/, "");
  if (clean.endsWith(".mjs") || clean.endsWith(".mts")) return "module";
  if (clean.endsWith(".cjs") || clean.endsWith(".cts")) return "commonjs";
  if (!(clean.endsWith(".js") || clean.endsWith(".ts")) || !clean.startsWith("file:")) return undefined;
  const dirUrl = clean.slice(0, clean.lastIndexOf("/") + 1);
  let type = types.get(dirUrl);
  if (type === undefined) {
    type = "commonjs";
    try {
      const root = findPackageRoot(url.fileURLToPath(dirUrl));
      const json = root === undefined ? undefined : readJson(path.join(root, "package.json"));
      if (json?.ok && (json.value as { type?: unknown })?.type === "module") type = "module";
    } catch {}
    types.set(dirUrl, type);
  }
  return type;
}
