/**
 * The epilogue appended to a watched CommonJS dispatch module that require() loads under Node's
 * in-thread hooks. The module keeps its own file name, so require.resolve(), __filename,
 * require.cache and stack traces name the real file. A pure function of its arguments: no I/O and
 * no globals.
 *
 * - Nothing is prepended or changed: `source` is an exact prefix of the result, so every line and
 *   column stays where it was. A trailing `//# sourceMappingURL` (or `sourceURL`) comment is
 *   repeated after the epilogue so that it stays last.
 * - The epilogue is one line. Every value in it is interpolated through JSON.stringify, and the
 *   identifier it declares occurs nowhere in `source`.
 * - At the end of the body it announces `module.exports`. The registration modules are required
 *   once the module has finished loading (`module.loaded`), when its loader first reads
 *   `module.exports` to hand it to the requirer (Node's Module#load and Module._load, Jest's
 *   requireModule): an ES registration module that imports the dispatch module back would fail
 *   with ERR_REQUIRE_CYCLE_MODULE while it is still loading (Node 22, 24, 26). Each runs in its
 *   window, a throw recorded rather than rethrown (runtime/require-registrations.ts).
 */
import { url } from "../builtins.js";
import type { ModuleInfo } from "../channel.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import { windowInfo } from "./facade.js";
import type { PlannedRegistration } from "./matcher.js";

export interface EpilogueInput {
  readonly module: ModuleInfo;
  readonly registrations: readonly PlannedRegistration[];
  /** The path (or specifier) of dispatch-hook's CommonJS runtime, for require(). */
  readonly runtime: string;
}

export function instrument(source: string, input: EpilogueInput): string {
  if (typeof source !== "string") {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_SOURCE", `instrument(): source must be a string, got ${describe(source)}.`);
  }
  const id = freeIdentifier(source);
  const info = JSON.stringify(input.module);
  const registrations = JSON.stringify(input.registrations.map((r) => ({ window: windowInfo(input.module, r), path: pathOf(r.url) })));
  const epilogue =
    `;{const ${id}=require(${JSON.stringify(input.runtime)});${id}.signalEvaluated(${info},module.exports);` +
    `${id}.requireWhenLoaded(module,${info},require,${registrations});}`;
  const trailer = trailingDirectives(source);
  const separator = source.length === 0 || source.endsWith("\n") ? "" : "\n";
  return `${source}${separator}${epilogue}\n${trailer}`;
}

/**
 * The epilogue appended to a watched ES module that no plugin has a registration module for (Node's
 * hooks): at the end of its body it imports its own namespace (the exact URL, query included, so
 * the same instance) and announces the table. No generated module and no second URL: import.meta,
 * resolution, stack traces, and import() beside require() all see the module itself. The same rules
 * as instrument(): append only, one line, JSON.stringify for every value, free identifiers.
 */
export function esmEpilogue(source: string, module: ModuleInfo, runtime: string): string {
  if (typeof source !== "string") {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_SOURCE", `esmEpilogue(): source must be a string, got ${describe(source)}.`);
  }
  const ns = freeIdentifier(source);
  const signal = `${ns}s`;
  const epilogue =
    `;import * as ${ns} from ${JSON.stringify(module.url)};import { signalEvaluated as ${signal} } from ${JSON.stringify(runtime)};` +
    `${signal}(${JSON.stringify(module)},${ns});`;
  const separator = source.length === 0 || source.endsWith("\n") ? "" : "\n";
  return `${source}${separator}${epilogue}\n${trailingDirectives(source)}`;
}

/** What require() takes for a registration module: its path, or the URL itself if it is not a file URL. */
function pathOf(href: string): string {
  try {
    return url.fileURLToPath(href);
  } catch {
    return href;
  }
}

/** A name that occurs nowhere in `source`, so no binding of the module can collide with ours. */
function freeIdentifier(source: string): string {
  let n = 0;
  while (source.includes(`__dispatchHook${n}`)) n++;
  return `__dispatchHook${n}`;
}

/**
 * The `//# sourceMappingURL=` / `//# sourceURL=` comments at the end of `source`, to repeat after
 * the epilogue. Engines use the last such comment, so repeating them keeps source maps and names
 * working without touching the original text.
 */
export function trailingDirectives(source: string): string {
  // Read from the end, a line at a time: the rest of a large module is never split or copied.
  const kept: string[] = [];
  for (let end = source.length; end > 0; ) {
    const start = source.lastIndexOf("\n", end - 1) + 1;
    const line = source.slice(start, end).trim();
    end = start - 1;
    if (line === "") continue;
    if (!/^\/\/[#@]\s*source(?:Mapping)?URL=\S*$/.test(line)) break;
    kept.unshift(line);
  }
  return kept.length === 0 ? "" : `${kept.join("\n")}\n`;
}
