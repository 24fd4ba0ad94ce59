/**
 * Added to Vitest's setupFiles by dispatch-hook/vite. While DISPATCH_HOOK_AUDIT_DIR names a run (the
 * command line's, or the reporter's), each test file's worker writes its audit record after the
 * file, naming it; under DISPATCH_HOOK_AUDIT, it gives the verdict the exit would have given (strict
 * fails the file): Vitest stops its workers without running their exit handlers. Otherwise nothing.
 */
import * as vitest from "vitest";
import { hostAdapters, hostPlugins, pluginsKey } from "../host-adapters.js";
import { recordAfterTestFile } from "../registry/exit-audit.js";

// The thread's audit knows the host adapter serves it before any of its dispatch modules loads.
hostAdapters().add("dispatch-hook/vite");
// And which plugins the project declares: a table made where the plugin cannot reach (a require() of
// a CommonJS dispatch module) is then named with the plugin whose registration module never ran for it.
const plugins = typeof vitest.inject === "function" ? (vitest.inject as (key: string) => unknown)(pluginsKey) : undefined;
if (Array.isArray(plugins) && hostPlugins().length === 0) hostPlugins().push(...plugins);
recordAfterTestFile(vitest);
