/**
 * The generated modules: pure functions of their input (every value through JSON.stringify), so
 * every host (Node's hooks, the Vite, esbuild and Jest adapters) generates the same code. Importers
 * of a watched ES dispatch module get its facade, which re-exports the original and then imports,
 * per plugin, a step marker, the registration module and a done marker:
 *
 *   export * from "<original>"; export { default } from "<original>";
 *   import "<step 0>";  import "<early 0>";  import "<registration module 0>";  import "<done 0>";
 *   …
 *   import "<step n>";  import "<early n>";
 *
 * Static imports evaluate in order, so each registration module runs after the original's body and
 * before any importer continues, and may import the table back (the facade's bindings are the
 * original's). Step 0 announces the table; step i opens window i; done i marks that registration
 * module i has finished, top-level awaits included; step n ends the synchronous pass (runtime/window.ts).
 * Early i imports nothing but the runtime: where the original awaits at its top level, the steps
 * (which import it) wait for it, and ES modules run a registration module that does not import the
 * original at once; early i opens its window first, and early n ends that pass. After a step, it does nothing.
 */
import type { ModuleInfo, WindowInfo } from "../channel.js";
import { DispatchHookError } from "../registry/errors.js";

export interface FacadeRegistration {
  readonly plugin: string;
  /** File URL of the registration module (its identity in the audit). */
  readonly url: string;
  /** How generated code imports it. */
  readonly specifier: string;
  /** Set when it cannot be loaded (it does not exist): the facade records that instead of importing it. */
  readonly missing?: string;
  /**
   * For a CommonJS registration module under Node 20's off-thread hooks: its file path. Its done
   * marker require()s it, and the facade does not import it (see "done" in markerSource).
   */
  readonly requirePath?: string;
  /** Loaded by a require() of its specifier in its done marker, which a bundler resolves (HostIds.graph). */
  readonly required?: boolean;
}

/** The markers a facade imports: a "require" marker for a CommonJS original, and step and done markers per plugin. */
export type MarkerKind = "require" | "step" | "early" | "done";

export interface FacadeInput {
  readonly module: ModuleInfo;
  /** How generated code imports the original module. */
  readonly original: string;
  /** How generated code imports dispatch-hook's runtime. */
  readonly runtime: string;
  readonly hasDefault: boolean;
  readonly registrations: readonly FacadeRegistration[];
  /** How generated code imports a marker (a host-specific virtual module). */
  readonly marker: (kind: MarkerKind, index?: number) => string;
  /**
   * For a CommonJS original under Node's hooks: what the "require" marker passes to require()
   * before the facade imports it (its path, or its original URL where the hooks see require()).
   */
  readonly requirePath?: string;
}

const s = JSON.stringify;

/** A registration window's name: one per dispatch module instance and registration module. */
export function windowInfo(module: ModuleInfo, registration: { readonly plugin: string; readonly url: string }): WindowInfo {
  return {
    id: `${module.url} ${registration.url}`,
    url: module.url,
    backend: module.backend,
    plugin: registration.plugin,
    module: registration.url,
  };
}

/** The namespace expression the runtime gets: a CommonJS module's exports are its default export. */
function namespace(input: FacadeInput, name: string): string {
  return input.module.format === "commonjs" ? `${name}.default` : name;
}

/**
 * A CommonJS original is first loaded by a "require" marker: on Node 20 an ES module importing a
 * CommonJS module that throws turns the error into an uncaught exception even when caught (not on 22
 * and 24). Loaded by require() first, a throw is an ordinary error, and the import that follows gets
 * the cached module. A facade with no plugin announces the table from its own body.
 */
export function facadeSource(input: FacadeInput): string {
  const lines: string[] = [];
  if (input.module.format === "commonjs" && input.requirePath !== undefined) lines.push(`import ${s(input.marker("require"))};`);
  lines.push(`export * from ${s(input.original)};`);
  if (input.hasDefault) lines.push(`export { default } from ${s(input.original)};`);
  const count = input.registrations.length;
  if (count === 0) {
    lines.push(
      `import * as __dispatchHookNs from ${s(input.original)};`,
      `import { signalEvaluated } from ${s(input.runtime)};`,
      `signalEvaluated(${s(input.module)}, ${namespace(input, "__dispatchHookNs")});`,
    );
    return `${lines.join("\n")}\n`;
  }
  input.registrations.forEach((registration, i) => {
    lines.push(`import ${s(input.marker("step", i))};`);
    if (registration.missing !== undefined) return;
    lines.push(`import ${s(input.marker("early", i))};`);
    if (registration.requirePath === undefined && registration.required !== true) lines.push(`import ${s(registration.specifier)};`);
    lines.push(`import ${s(input.marker("done", i))};`);
  });
  // The last step ends the synchronous pass: what the app runs next is in no window.
  lines.push(`import ${s(input.marker("step", count))};`, `import ${s(input.marker("early", count))};`);
  return `${lines.join("\n")}\n`;
}

/**
 * The CommonJS facade, for hosts whose modules are files (Jest) when require() loads a CommonJS
 * original: it requires the original, announces its exports, then runs the registration modules,
 * each in its window with a throw contained; the original has finished loading by then, so one that
 * imports it back finds it complete. `runtime` and `requirePath` are paths for require().
 */
export function cjsFacadeSource(input: FacadeInput): string {
  const registrations = input.registrations.map((r) => ({
    window: windowInfo(input.module, r),
    path: r.specifier,
    ...(r.missing === undefined ? {} : { missing: r.missing }),
  }));
  // Until the original has loaded, module.exports is the original's, read when asked: a require()
  // cycle through the original can reach this facade while the original is still loading, and must
  // get the original's own exports object, the one its body is still filling, as without the
  // facade. The assignment stays a literal `module.exports = require("…")`, which Node's CommonJS
  // lexer reads as a re-export, so importers keep the original's named exports.
  const original = s(input.requirePath ?? "");
  return [
    `const runtime = require(${s(input.runtime)});`,
    "let loaded;",
    `Object.defineProperty(module, "exports", { configurable: true, enumerable: true, get: () => loaded ?? require.cache?.[${original}]?.exports, set: (value) => { loaded = value; } });`,
    `module.exports = require(${original});`,
    `runtime.signalEvaluated(${s(input.module)}, module.exports);`,
    `runtime.requireRegistrations(${s(input.module)}, module.exports, require, ${s(registrations)});`,
    "",
  ].join("\n");
}

/**
 * A marker. Step i (one per registration module, and one more after the last): step 0 announces
 * the table; each ends the previous window's synchronous part and opens window i, or records
 * registration module i as missing. See runtime/window.ts.
 */
export function markerSource(kind: MarkerKind, index: number, input: FacadeInput): string {
  if (kind === "require")
    return `import { createRequire } from "node:module";\ncreateRequire(${s(input.original)})(${s(input.requirePath ?? "")});\n`;
  if (!Number.isInteger(index) || index < 0 || index > input.registrations.length) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `markerSource(): the plan has no step #${index} for ${input.module.url} (it has ${input.registrations.length + 1}).`,
    );
  }
  const registration = input.registrations[index];
  if (kind === "done") {
    // Imports its registration module, so it runs once that module has finished, awaits included.
    if (registration === undefined || registration.missing !== undefined) return "";
    const info = windowInfo(input.module, registration);
    const finish = `import { finish } from ${s(input.runtime)};\n`;
    // A CommonJS one is required, in the window its step opened: imported, it would be run by
    // Node 20's ES module translator, whose require() breaks when a loader (tsx) gave the module's
    // source (require() of an ES module, or of a module require() loaded first, throws "reading
    // 'exports'"), and whose throw Node 20 turns into an uncaught exception.
    if (registration.requirePath !== undefined) {
      const load = `createRequire(${s(registration.url)})(${s(registration.requirePath)});\n`;
      return `import { createRequire } from "node:module";\n${finish}${load}finish(${s([info])});\n`;
    }
    if (registration.required === true) return `${finish}require(${s(registration.specifier)});\nfinish(${s([info])});\n`;
    return `import ${s(registration.specifier)};\n${finish}finish(${s([info])});\n`;
  }
  const missing = registration?.missing;
  const windows = input.registrations.map((r) => windowInfo(input.module, r));
  if (kind === "early") return `import { early } from ${s(input.runtime)};\nearly(${s(input.module)}, ${s(windows)}, ${index});\n`;
  const args = [s(input.module), namespace(input, "ns"), s(windows), String(index), ...(missing === undefined ? [] : [s(missing)])];
  return `import * as ns from ${s(input.original)};\nimport { step } from ${s(input.runtime)};\nstep(${args.join(", ")});\n`;
}
