/**
 * The epilogue appended to a watched CommonJS dispatch module (on Node versions whose hooks see
 * require(): module.registerHooks). ES dispatch modules are never changed: they get a facade
 * (facade.ts). A pure function of its arguments: no I/O and no globals.
 *
 * - Nothing is prepended or changed: `source` is an exact prefix of the result, so every line and
 *   column stays where it was. A trailing `//# sourceMappingURL` (or `sourceURL`) comment is
 *   repeated after the epilogue so that it stays last.
 * - The epilogue is one line. Every value in it is interpolated through JSON.stringify, and the
 *   identifier it declares occurs nowhere in `source`.
 * - At the end of the body it announces `module.exports`; the registration modules run when the
 *   require() of the module returns (runtime/require-end.ts), not inside it.
 */
import type { ModuleInfo } from "../channel.js";
import { DispatchHookError, describe } from "../registry/errors.js";
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
  const registrations = JSON.stringify(input.registrations.map(({ plugin, url }) => ({ plugin, url })));
  const epilogue =
    `;{const ${id}=require(${JSON.stringify(input.runtime)});${id}.signalEvaluated(${info},module.exports);` +
    `${id}.afterRequire(${info},module.exports,require,${registrations});}`;
  const trailer = trailingDirectives(source);
  const separator = source.length === 0 || source.endsWith("\n") ? "" : "\n";
  return `${source}${separator}${epilogue}\n${trailer}`;
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
function trailingDirectives(source: string): string {
  const lines = source.split(/\r?\n/);
  const kept: string[] = [];
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    if (/^\/\/[#@]\s*source(?:Mapping)?URL=\S*$/.test(line)) {
      kept.unshift(line);
      continue;
    }
    break;
  }
  return kept.length === 0 ? "" : `${kept.join("\n")}\n`;
}
