/**
 * The module hooks, built by factories so that each installation has its own state. The same
 * transform serves both of Node's hook APIs:
 * - `module.registerHooks` (in-thread, synchronous): `createSyncLoad`;
 * - `module.register` (off-thread, asynchronous): this file is also the hooks module, and its
 *   `initialize` and `load` exports are what Node calls on the hooks thread.
 */
import type { MessagePort } from "node:worker_threads";
import type { PluginDeclaration, WatchRule } from "./config.js";
import { instrument, type ModuleFormat } from "./instrument.js";
import { Matcher, type ModulePlan } from "./matcher.js";

// process.getBuiltinModule, not `import`: building the ES module facade of a builtin costs
// start-up time (node:fs alone about 3 ms), and the loader runs at the start of every process.
const { readFileSync } = process.getBuiltinModule("node:fs");
const { fileURLToPath } = process.getBuiltinModule("node:url");

/** What the hooks tell the installation. Crosses the thread boundary on Node 20. */
export type HookReport =
  | { readonly type: "instrumented"; readonly url: string; readonly backend: string; readonly format: ModuleFormat }
  | { readonly type: "failed"; readonly url: string; readonly backend: string; readonly message: string };

/** What `module.register` passes to `initialize` on the hooks thread. */
export interface HooksData {
  readonly rules: readonly WatchRule[];
  readonly plugins: readonly PluginDeclaration[];
  readonly port: MessagePort;
}

interface LoadResult {
  format?: string | null | undefined;
  source?: string | ArrayBuffer | ArrayBufferView | null | undefined;
  shortCircuit?: boolean | undefined;
}
type LoadContext = { format?: string | null | undefined; conditions?: readonly string[]; importAttributes?: Record<string, string> };
type NextLoadSync = (url: string, context?: LoadContext) => LoadResult;
type NextLoadAsync = (url: string, context?: LoadContext) => LoadResult | Promise<LoadResult>;

function formatOf(format: string | null | undefined): ModuleFormat | undefined {
  if (format === "module" || format === "module-typescript") return "module";
  if (format === "commonjs" || format === "commonjs-typescript") return "commonjs";
  return undefined;
}

/**
 * Instruments one loaded module, or returns it unchanged. Never throws: a loader must not take
 * down the app, so a failure is reported and the original result is returned.
 */
export function transform(url: string, result: LoadResult, plan: ModulePlan, report: (message: HookReport) => void): LoadResult {
  const format = formatOf(result.format);
  if (format === undefined) return result;
  try {
    let source = result.source;
    // Node 20 hands CommonJS to its own loader with no source; read it to instrument it.
    if (source === null || source === undefined) source = readFileSync(fileURLToPath(url));
    // Buffer, not TextDecoder: the global TextDecoder is a lazy getter that replaces itself on
    // globalThis when first touched, and node:util costs milliseconds to load at start-up.
    const text =
      typeof source === "string"
        ? source
        : ArrayBuffer.isView(source)
          ? Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString("utf8")
          : Buffer.from(source as ArrayBuffer).toString("utf8");
    const out = instrument(text, url, format, plan);
    report({ type: "instrumented", url, backend: plan.backend, format });
    return { ...result, source: out };
  } catch (error) {
    report({ type: "failed", url, backend: plan.backend, message: error instanceof Error ? error.message : String(error) });
    return result;
  }
}

/** A synchronous load hook for `module.registerHooks`. */
export function createSyncLoad(matcher: Matcher, report: (message: HookReport) => void) {
  return function load(url: string, context: LoadContext, nextLoad: NextLoadSync): LoadResult {
    const plan = matcher.match(url);
    if (plan === undefined) return nextLoad(url, context);
    return transform(url, nextLoad(url, context), plan, report);
  };
}

/** An asynchronous load hook for `module.register`. */
export function createAsyncLoad(matcher: Matcher, report: (message: HookReport) => void) {
  return async function load(url: string, context: LoadContext, nextLoad: NextLoadAsync): Promise<LoadResult> {
    const plan = matcher.match(url);
    if (plan === undefined) return nextLoad(url, context);
    return transform(url, await nextLoad(url, context), plan, report);
  };
}

// ---- the hooks-thread entry (module.register). One module instance per installation: install()
// registers this file under a URL with a unique query, so this state is the installation's own.

let hooksLoad: ReturnType<typeof createAsyncLoad> | undefined;

export function initialize(data: HooksData): void {
  const port = data.port;
  hooksLoad = createAsyncLoad(new Matcher(data.rules, data.plugins), (message) => port.postMessage(message));
  port.on("message", (message: { type?: string }) => {
    if (message?.type === "disable") hooksLoad = undefined;
  });
  port.unref();
}

export async function load(url: string, context: LoadContext, nextLoad: NextLoadAsync): Promise<LoadResult> {
  if (hooksLoad === undefined) return nextLoad(url, context);
  return hooksLoad(url, context, nextLoad);
}
