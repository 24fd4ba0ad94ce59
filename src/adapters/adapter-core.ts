/**
 * What every host adapter (Vite and Vitest, esbuild, Jest) shares: the declarations, found as the
 * loader finds them or given inline, the watch list, and the modules Node's hooks generate
 * (facade.ts). An adapter only maps its host's ids. A host that can replace a module's code gives
 * the dispatch module's own id the facade and loads the original under another id: importers get the
 * facade without being redirected, and the original's code is never changed.
 */
import { path, url } from "../builtins.js";
import type { ModuleInfo } from "../channel.js";
import { warnConfigProblems } from "../hooks/config-field.js";
import { type InlineDeclarations, inlineFields } from "../hooks/declarations.js";
import { Discovery } from "../hooks/discovery.js";
import { hasDefaultExport } from "../hooks/export-names.js";
import { cjsFacadeSource, type FacadeInput, facadeSource, type MarkerKind, markerSource } from "../hooks/facade.js";
import { runtimeLocation } from "../hooks/hook-api.js";
import { Matcher, type ModulePlan } from "../hooks/matcher.js";
import { unloadableRegistration } from "../hooks/module-facts.js";
import { checkOptions } from "../registry/options.js";

export interface AdapterOptions extends InlineDeclarations {
  /** The app's directory (default: the host's root, else the working directory's package). */
  readonly root?: string;
  /** Read package.json declarations (default true). */
  readonly discover?: boolean;
}

/** How a host names the modules the facade imports. */
export interface HostIds {
  /** The original module, under an id that does not get the facade again. */
  readonly original: string;
  /** A marker (a virtual module of the host). */
  readonly marker: (kind: MarkerKind, index?: number) => string;
  /** dispatch-hook's runtime, as the host resolves it. */
  readonly runtime: string;
  /** How a registration module (a file path) is imported. */
  readonly registration?: (file: string) => string;
  /**
   * A module's graph (a file path): whether it awaits at a top level, and its files. Given, the
   * registration modules are required by their done markers, not imported by the facade: a bundler
   * that evaluates a shared chunk before the chunk that imports it (esbuild with splitting) then
   * makes each a lazy module, run where its marker runs, in its window. Except those require()
   * would not wait for: one whose graph awaits, and, where the facade awaits (the dispatch module
   * or another registration module does), one that imports the dispatch module back.
   */
  readonly graph?: (file: string) => { readonly awaits: boolean; readonly files: ReadonlySet<string> };
}

/** What a host loads as code: JavaScript and TypeScript, in either module system. */
const code = /\.[cm]?[jt]sx?$/;

const optionKinds = { root: "string", backends: "object", plugins: "array", discover: "boolean" } as const;

/** `host` names the adapter ("dispatch-hook/vite") in errors, and in the audit of the tables its facades announce. */
export function createAdapterCore(options: AdapterOptions = {}, host = "dispatch-hook adapter") {
  checkOptions(options, optionKinds, `${host} options`);
  const discovery = new Discovery({
    ...(options.root === undefined ? {} : { root: options.root }),
    entry: undefined,
    inline: inlineFields(options, `${host} options`),
    inlineSource: `${host} options`,
    configFile: process.env.DISPATCH_HOOK_CONFIG || undefined,
    packages: options.discover !== false,
    // A host sees only the modules it loads itself, not every import the way Node's hooks do: the
    // whole tree is read once, up front (a build or a test run, not a program's start-up).
    transitive: options.discover !== false,
  });
  let version = -1;
  let matcher = new Matcher([]);
  // Config problems are warnings, as under the loader: each once, with its code.
  const warned = new Set<string>();
  const current = () => {
    if (discovery.version !== version) {
      version = discovery.version;
      const config = discovery.config();
      matcher = new Matcher(config.rules, config.plugins);
      warnConfigProblems(config.problems, warned);
    }
    return matcher;
  };

  // Declarations it could not read may hide a plugin: the audit cannot say ok over them, as under the loader.
  const unread = () => discovery.config().problems.flatMap((p) => (p.readAnyway === true ? [] : [`${p.message}. ${p.fix} (${p.code})`]));
  const input = (file: string, format: ModuleInfo["format"], hasDefault: boolean, ids: HostIds): FacadeInput => {
    const href = url.pathToFileURL(file).href;
    const plan = current().match(href) ?? { backend: "?", exportName: "?", registrations: [] };
    // No loader answers for the declarations where the facade runs: the table carries them.
    const plugins = discovery.config().plugins.flatMap((p) => {
      const registration = p.registrations[plan.backend];
      const expects = p.expects[plan.backend];
      if (registration === undefined && expects === undefined) return [];
      return [
        {
          name: p.name,
          declaredIn: p.declaredIn,
          registrations: registration === undefined ? {} : { [plan.backend]: registration },
          expects: expects === undefined ? {} : { [plan.backend]: expects },
        },
      ];
    });
    const graph = ids.graph;
    const loadable = plan.registrations.filter((r) => unloadableRegistration(r.url) === undefined).map((r) => url.fileURLToPath(r.url));
    const waits = graph !== undefined && (graph(file).awaits || loadable.some((f) => graph(f).awaits));
    const required = (f: string) => graph !== undefined && !graph(f).awaits && !(waits && graph(f).files.has(file));
    return {
      module: { url: href, backend: plan.backend, exportName: plan.exportName, format, host: { name: host, plugins, problems: unread() } },
      original: ids.original,
      runtime: ids.runtime,
      hasDefault,
      registrations: plan.registrations.map((r) => {
        const registration = url.fileURLToPath(r.url);
        const missing = unloadableRegistration(r.url);
        return {
          plugin: r.plugin,
          url: r.url,
          specifier: ids.registration?.(registration) ?? registration,
          ...(missing === undefined ? {} : { missing }),
          ...(missing === undefined && required(registration) ? { required: true } : {}),
        };
      }),
      marker: ids.marker,
    };
  };

  return {
    config: () => discovery.config(),
    /** The absolute path of dispatch-hook's ES runtime, for hosts that import by path. */
    runtimePath: url.fileURLToPath(runtimeLocation().esm),
    /** How a file loads, by its extension and its package's "type" (a host that bundles CommonJS needs it). */
    formatOf: (file: string): ModuleInfo["format"] => discovery.formatOf(url.pathToFileURL(file).href) ?? "module",
    /**
     * The plan for a module file, or undefined if it is not a watched dispatch module. Learns its
     * package first. Code files only: JSON, an addon or a stylesheet a pattern matches is left to the
     * host, as the loader leaves them to Node.
     */
    plan(file: string): ModulePlan | undefined {
      if (!path.isAbsolute(file) || !code.test(file)) return undefined;
      const href = url.pathToFileURL(file).href;
      discovery.learn(href);
      const m = current();
      return m.watches(href) ? m.match(href) : undefined;
    },
    /** The facade that stands in for `file` (whose current code is `code`) under the host's ids. */
    facade(file: string, code: string, format: ModuleInfo["format"], ids: HostIds): string {
      const hasDefault = format === "commonjs" || hasDefaultExport(code).hasDefault;
      return facadeSource(input(file, format, hasDefault, ids));
    },
    /** The source of a marker the facade imports. */
    marker(file: string, format: ModuleInfo["format"], kind: MarkerKind, index: number, ids: HostIds): string {
      return markerSource(kind, index, input(file, format, false, ids));
    },
    /** The CommonJS facade of `file`: requires it, then its registration modules. */
    cjsFacade(file: string, runtimePath: string): string {
      const ids: HostIds = { original: file, runtime: runtimePath, marker: () => "" };
      return cjsFacadeSource({ ...input(file, "commonjs", true, ids), requirePath: file });
    },
  };
}
