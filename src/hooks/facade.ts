/**
 * The generated modules, in one template module. Pure functions of their input: no I/O and no
 * globals, so every host (Node's hooks, the Vite, esbuild and Jest adapters) generates the same
 * code. Every value interpolated goes through JSON.stringify.
 *
 * Importers of a watched ES dispatch module get its facade instead:
 *
 *   export * from "<original>"; export { default } from "<original>";   // the same exports
 *   import "<evaluated>";      // the original has finished: announce its table (registrations land)
 *   import "<begin 0>"; import "<registration module 0>"; import "<end 0>";   // per plugin
 *
 * A module's static imports evaluate in order, so each registration module runs after the
 * original's body and before any importer continues, as the Python import hook's did, and it may
 * import the table from the dispatch module (it reads the facade's bindings, which are the
 * original's). The original itself is not changed at all.
 *
 * require() of a CommonJS original (where the hooks see require(): registerHooks) gets a CommonJS
 * facade instead, which requires the original, announces its exports and then runs the
 * registration modules, each in its window with a throw contained. The original has finished loading
 * by then, so a registration module that imports it back finds it complete.
 *
 * A CommonJS original is first loaded with require() by a "require" marker: on Node 20 an ES module
 * that imports a CommonJS module which throws turns the error into an uncaught exception, even
 * when the importer catches it (Node 22 and 24 do not). Loaded by require() first, a throw is an
 * ordinary ES module error, and a successful load is cached, so the import that follows does not
 * run the module again.
 */
import type { ModuleInfo, WindowInfo } from "../channel.js";
import { DispatchHookError } from "../registry/errors.js";
import { windowInfo } from "../runtime/window-info.js";
import type { VirtualKind } from "./virtual-modules.js";

export interface FacadeRegistration {
  readonly plugin: string;
  /** File URL of the registration module (its identity in the audit). */
  readonly url: string;
  /** How generated code imports it. */
  readonly specifier: string;
  /** Set when it cannot be loaded (it does not exist): the facade records that instead of importing it. */
  readonly missing?: string;
}

export interface FacadeInput {
  readonly module: ModuleInfo;
  /** How generated code imports the original module. */
  readonly original: string;
  /** How generated code imports dispatch-hook's runtime. */
  readonly runtime: string;
  readonly hasDefault: boolean;
  readonly registrations: readonly FacadeRegistration[];
  /** How generated code imports a marker (a host-specific virtual module). */
  readonly marker: (kind: Exclude<VirtualKind, "facade" | "cjs-facade">, index?: number) => string;
  /** For a CommonJS original under Node's hooks: its file path, required before it is imported. */
  readonly requirePath?: string;
}

const s = JSON.stringify;

function window(input: FacadeInput, index: number): WindowInfo {
  const registration = input.registrations[index];
  if (registration === undefined) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `markerSource(): the plan has no registration module #${index} for ${input.module.url}.`,
    );
  }
  return windowInfo(input.module, registration);
}

/** The namespace expression the runtime gets: a CommonJS module's exports are its default export. */
function namespace(input: FacadeInput): string {
  return input.module.format === "commonjs" ? "ns.default" : "ns";
}

export function facadeSource(input: FacadeInput): string {
  const lines: string[] = [];
  if (input.module.format === "commonjs" && input.requirePath !== undefined) lines.push(`import ${s(input.marker("require"))};`);
  lines.push(`export * from ${s(input.original)};`);
  if (input.hasDefault) lines.push(`export { default } from ${s(input.original)};`);
  lines.push(`import ${s(input.marker("evaluated"))};`);
  input.registrations.forEach((registration, i) => {
    if (registration.missing !== undefined) lines.push(`import ${s(input.marker("missing", i))};`);
    else
      lines.push(`import ${s(input.marker("begin", i))};`, `import ${s(registration.specifier)};`, `import ${s(input.marker("end", i))};`);
  });
  return `${lines.join("\n")}\n`;
}

/** The CommonJS facade: `runtime` and `requirePath` are paths for require(). */
export function cjsFacadeSource(input: FacadeInput): string {
  const registrations = input.registrations.map((r) => ({
    window: windowInfo(input.module, r),
    path: r.specifier,
    ...(r.missing === undefined ? {} : { missing: r.missing }),
  }));
  return [
    `const runtime = require(${s(input.runtime)});`,
    `module.exports = require(${s(input.requirePath ?? "")});`,
    `runtime.signalEvaluated(${s(input.module)}, module.exports);`,
    `runtime.requireRegistrations(${s(input.module)}, module.exports, require, ${s(registrations)});`,
    "",
  ].join("\n");
}

export function markerSource(kind: Exclude<VirtualKind, "facade" | "cjs-facade">, index: number, input: FacadeInput): string {
  const ns = `import * as ns from ${s(input.original)};`;
  switch (kind) {
    case "require":
      return `import { createRequire } from "node:module";\ncreateRequire(${s(input.original)})(${s(input.requirePath ?? "")});\n`;
    case "evaluated":
      return `${ns}\nimport { signalEvaluated } from ${s(input.runtime)};\nsignalEvaluated(${s(input.module)}, ${namespace(input)});\n`;
    case "begin":
      return `${ns}\nimport { openWindow } from ${s(input.runtime)};\nexport const window = openWindow(${s(window(input, index))}, ${s(input.module)}, ${namespace(input)});\n`;
    case "end":
      return `import { window } from ${s(input.marker("begin", index))};\nwindow.close();\n`;
    case "missing":
      return `${ns}\nimport { missingRegistration } from ${s(input.runtime)};\nmissingRegistration(${s(window(input, index))}, ${s(input.module)}, ${namespace(input)}, ${s(input.registrations[index]?.missing ?? "")});\n`;
  }
}
