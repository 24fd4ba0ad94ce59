import { channelNames } from "./channel.js";
import type { ModulePlan } from "./matcher.js";

export type ModuleFormat = "module" | "commonjs";

/**
 * Appends the signal to a watched dispatch module. A pure function of its arguments: no I/O and no
 * globals, so bundler plugins can reuse it as it is.
 *
 * - Nothing is prepended or changed: `source` is an exact prefix of the result, so every line and
 *   column stays where it was. A trailing `//# sourceMappingURL` (or `sourceURL`) comment is
 *   repeated after the epilogue so that it stays last.
 * - The epilogue is one line. Every value in it is interpolated through JSON.stringify, and the
 *   identifiers it declares do not occur anywhere in `source`.
 * - ES modules: the epilogue imports the module's own namespace by its exact URL and the
 *   registration modules, statically; at the end of the body it publishes the namespace. There is
 *   no top-level await, so `require()` of the module keeps working.
 * - CommonJS: the epilogue requires the registration modules, then publishes `module.exports`.
 */
export function instrument(source: string, url: string, format: ModuleFormat, plan: ModulePlan): string {
  if (typeof source !== "string") throw new TypeError("instrument(): source must be a string");
  const id = freeIdentifier(source);
  const message = `{version:1,url:${JSON.stringify(url)},backend:${JSON.stringify(plan.backend)},exportName:${JSON.stringify(plan.exportName)},format:${JSON.stringify(format)},namespace:`;
  const channel = JSON.stringify(channelNames.moduleEvaluated);
  let epilogue: string;
  if (format === "module") {
    const imports = plan.registrations.map((registration) => `import ${JSON.stringify(registration)};`).join("");
    epilogue =
      `;import * as ${id}_ns from ${JSON.stringify(url)};import { channel as ${id}_channel } from "node:diagnostics_channel";${imports}` +
      `{const ${id}_c=${id}_channel(${channel});if(${id}_c.hasSubscribers)${id}_c.publish(${message}${id}_ns});}`;
  } else {
    // require() takes paths, not URLs; fileURLToPath is the only faithful conversion.
    const requires = plan.registrations.map((registration) => `require(${id}_path(${JSON.stringify(registration)}));`).join("");
    const path = plan.registrations.length === 0 ? "" : `const ${id}_path=require("node:url").fileURLToPath;`;
    epilogue = `;{${path}${requires}const ${id}_c=require("node:diagnostics_channel").channel(${channel});if(${id}_c.hasSubscribers)${id}_c.publish(${message}module.exports});}`;
  }
  const trailer = trailingDirectives(source);
  const separator = source.length === 0 || source.endsWith("\n") ? "" : "\n";
  return `${source}${separator}${epilogue}\n${trailer}`;
}

/** A name prefix that occurs nowhere in `source`, so no binding of the module can collide with ours. */
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
