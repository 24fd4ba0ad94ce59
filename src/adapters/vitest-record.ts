/**
 * Added to Vitest's setupFiles by dispatch-hook/vite; it runs before each test file.
 * - While DISPATCH_HOOK_AUDIT_DIR names a run (the command line's, or the reporter's), the file's
 *   worker writes its audit record after the file, naming it: Vitest stops its workers without
 *   running their exit handlers.
 * - In a vm pool (`vmThreads`, `vmForks`), the default registry is restored after the file to what
 *   it was before it: Vitest 4.1 runs every file of a pool's only worker in one vm context
 *   (vitest-dev/vitest#10743), so a file's top-level `register()` would reach the next file's
 *   tables. Plugins' registration modules keep theirs (`restore()` never disposes those). In the
 *   other pools each file has modules of its own, unless `isolate: false` asks to share them.
 */
import * as vitest from "vitest";
import { vm } from "../builtins.js";
import { registry } from "../index.js";
import { recordAfterTestFile } from "../registry/exit-audit.js";

/** `globalThis` differs from the worker's main context's: the file runs in a vm context. */
const inVmContext = new (vm().Script)("globalThis").runInThisContext() !== globalThis;
const snapshot = inVmContext ? registry.snapshot() : undefined;

if (process.env.DISPATCH_HOOK_AUDIT_DIR || snapshot !== undefined) {
  recordAfterTestFile(vitest, snapshot === undefined ? undefined : () => registry.restore(snapshot));
}
