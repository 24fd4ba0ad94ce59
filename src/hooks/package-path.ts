/**
 * The shape checks a package.json declaration's values go through: a package name, a plain object,
 * and a path that stays inside its package (no absolute path, no `..` out of it, no NUL).
 */
import { path } from "../builtins.js";

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

/** A package-relative path that stays inside its package, normalised without "./"; or a reason. */
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
