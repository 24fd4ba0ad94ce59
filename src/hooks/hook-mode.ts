/**
 * Which of Node's hook APIs to use on which Node version. Each threshold is pinned by a test
 * (test/loading/choosing-the-hook-api.test.ts) and explained in notes/node-versions.md.
 */
export type HookMode = "registerHooks" | "register" | "none";

/**
 * - `registerHooks` (in-thread, sees `require()`) where it is safe: on Node 22.15 to 22.22.2 even a
 *   pass-through registerHooks hook breaks `require(esm)` from a CommonJS main; fixed in 22.22.3
 *   and 24.11.1. Node 23 is out of support and gets `register`.
 * - `register` (off-thread) from Node 20.16 (the first with process.getBuiltinModule, which the
 *   loader uses to keep start-up cheap), where registerHooks is missing or unsafe.
 * - Node 26 deprecates `register` (DEP0205): where registerHooks is safe we never call it.
 */
export function hookMode(version: string = process.versions.node): HookMode {
  const [major = 0, minor = 0, patch = 0] = version
    .replace(/^v/, "")
    .split(".")
    .map((part) => Number.parseInt(part, 10) || 0);
  const atLeast = (m: number, p: number) => minor > m || (minor === m && patch >= p);
  if (major >= 25) return "registerHooks";
  if (major === 24) return atLeast(11, 1) ? "registerHooks" : "register";
  if (major === 22) return atLeast(22, 3) ? "registerHooks" : "register";
  if (major === 23 || major === 21) return "register";
  // process.getBuiltinModule (20.16) keeps start-up cheap; module.register itself came in 20.6.
  if (major === 20) return atLeast(16, 0) ? "register" : "none";
  return "none";
}
