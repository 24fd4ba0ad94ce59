/// <reference lib="esnext.disposable" preserve="true" />
/**
 * install(): reads the config, attaches the hooks with the API the Node version supports, and then
 * answers for the thread what the loader knows: files read, what it watches, what it could not see,
 * and what it can add to a dispatch miss.
 */
import { fs, path } from "../builtins.js";
import type { DispatchMiss, InstallationStatus, LoaderFinding } from "../channel.js";
import { hub } from "../hub.js";
import { DispatchHookError } from "../registry/errors.js";
import { checkOptions } from "../registry/options.js";
import type { Registry } from "../registry/registry.js";
import { warnConfigProblems } from "./config-field.js";
import { type InlineDeclarations, inlineFields } from "./declarations.js";
import { appRoot, type DiscoverOptions, Discovery, emptyConfig, type HookConfig } from "./discovery.js";
import { attachHooks } from "./hook-api.js";
import { type HookMode, hookMode } from "./hook-mode.js";
import { loaderFindings } from "./loader-findings.js";
import { Matcher } from "./matcher.js";
import type { HookReport } from "./module-facts.js";

export type { PluginOptions } from "./declarations.js";

export interface InstallOptions extends InlineDeclarations {
  /** The app's directory (default: the package of the entry point, else the working directory's). */
  readonly root?: string;
  /** The registry this loader feeds: its verify() includes the loader's expectations and plugins. */
  readonly registry?: Registry;
  /** Read package.json files (default true). */
  readonly discover?: boolean;
  /** A JSON file holding a dispatchHook field (default: DISPATCH_HOOK_CONFIG). */
  readonly configFile?: string;
  /** Force a hook API; by default the Node version decides (see hook-mode.ts). */
  readonly mode?: Exclude<HookMode, "none">;
  /** Emit process warnings for configuration problems and failures (default true). */
  readonly warnings?: boolean;
}

/** One installation of the hooks. Everything it knows is its own; dispose() removes what it can. */
export interface Installation extends Disposable {
  readonly mode: HookMode;
  /** What was read so far (it grows as package scopes load); `problems` lists what was wrong with it. */
  readonly config: HookConfig;
  /** Watched module URLs the hooks generated a facade for or instrumented. */
  instrumented(): readonly string[];
  /** What the loader could not see or do, each with its backend: see LoaderFinding. */
  findings(): readonly LoaderFinding[];
  dispose(): void;
}

function declarations(config: HookConfig): string[] {
  return config.rules.map((r) => `${r.backend ?? "{backend}"} (${r.packageName ?? "?"}: ./${r.subpath})`);
}

/**
 * Where loader.mjs leaves the working directory of the first process of a tree that ran it, for the
 * processes it starts (the loader in NODE_OPTIONS, or in fork()'s execArgv): the app's directory.
 * The command line empties it for its command. A process whose own project (where its discovery
 * started) is another one is a helper, such as one a test starts in a temporary directory or a fixture.
 */
export const loaderVariable = "DISPATCH_HOOK_LOADER_CWD";

/**
 * Whether `root`, where this process's discovery started, is not the project (package) of `first`,
 * the directory of the first process of its tree, as this process found it when its loader started:
 * the first process itself finds none, and is never elsewhere.
 */
function elsewhere(first: string | undefined, root: string): boolean {
  if (first === undefined || first === "") return false;
  const real = (dir: string) => {
    let at: string;
    try {
      at = fs.realpathSync.native(dir);
    } catch {
      at = path.resolve(dir);
    }
    return process.platform === "win32" ? at.toLowerCase() : at;
  };
  return real(appRoot({ root: first })) !== real(root);
}

export function install(options: InstallOptions = {}): Installation {
  checkOptions(
    options,
    {
      root: "string",
      backends: "object",
      plugins: "array",
      registry: "registry",
      discover: "boolean",
      configFile: "string",
      mode: ["registerHooks", "register"],
      warnings: "boolean",
    },
    "install()",
  );
  const mode = options.mode ?? hookMode();
  if (mode === "none") {
    throw new DispatchHookError(
      "ERR_DISPATCH_HOOK_UNAVAILABLE",
      `install(): dispatch-hook's loader needs Node >= 20.16; this is Node ${process.versions.node}.`,
    );
  }
  const first = process.env[loaderVariable];
  let outside: { root: string; elsewhere: boolean } | undefined;
  const discoverOptions: DiscoverOptions = {
    ...(options.root === undefined ? {} : { root: options.root }),
    entry: process.argv[1],
    configFile: options.configFile ?? (process.env.DISPATCH_HOOK_CONFIG || undefined),
    inline: inlineFields(options, "install()"),
    packages: options.discover !== false,
  };
  // In-thread hooks share this discovery. With module.register the hooks thread reads the config
  // itself, just after register() returns, and reports it: reading it here as well would do the
  // same work twice, and keep the main thread from going on meanwhile.
  const discovery = mode === "registerHooks" ? new Discovery(discoverOptions) : undefined;
  let config: HookConfig = discovery?.config() ?? emptyConfig();
  let matcher = new Matcher(config.rules, config.plugins);
  const warn = options.warnings !== false;
  const warned = new Set<string>();
  const warnProblems = () => {
    if (warn) warnConfigProblems(config.problems, warned);
  };
  warnProblems();

  const loaded = new Map<string, string | null>();
  const served = new Map<string, Map<string, string>>();
  const registrationsResolved = new Set<string>();
  const failures = new Map<string, LoaderFinding>();
  /** Backend → that a plugin's registration module for it imports what does not resolve. */
  const unresolved = new Map<string, string>();
  const onReport = (message: HookReport) => {
    if (message.type === "config") {
      config = message.config;
      matcher = new Matcher(config.rules, config.plugins);
      warnProblems();
    } else if (message.type === "facade") {
      loaded.set(message.url, message.backend);
      // Per backend, the first module served with each set of plugins: few sets, however many instances (`?v=N`).
      const sets = served.get(message.backend) ?? new Map<string, string>();
      served.set(message.backend, sets);
      const key = message.plugins.join("\n");
      if (!sets.has(key)) sets.set(key, message.url);
    } else if (message.type === "registration") {
      registrationsResolved.add(message.url);
    } else if (message.type === "unresolved") {
      unresolved.set(message.backend, message.message);
    } else if (!failures.has(message.url)) {
      const finding: LoaderFinding = {
        backend: message.backend,
        module: message.url,
        problem: "instrument-failed",
        message: `${message.url} could not be fully instrumented (${message.message}).`,
      };
      failures.set(message.url, finding);
      if (warn) process.emitWarning(finding.message, { code: "DISPATCH_HOOK_INSTRUMENT_FAILED" });
    }
  };
  // The hooks thread's config arrives as a report (warned about as it arrives); none in-thread.
  const hooks = attachHooks(mode, discovery, discoverOptions, onReport);
  const findings = (): LoaderFinding[] => {
    hooks.drain();
    return loaderFindings({ mode, loaded, failures, matcher, unresolved, served, registrationsResolved, plugins: config.plugins });
  };

  const status = (): InstallationStatus => {
    hooks.drain();
    if (outside?.root !== config.root) outside = { root: config.root, elsewhere: elsewhere(first, config.root) };
    return {
      mode,
      backends: [...new Set(config.rules.map((rule) => rule.backend ?? "{backend}"))],
      // A declaration the loader could not read may hide a plugin or a backend: the audit cannot say ok over it.
      findings: [
        ...findings(),
        // (One read all the same, such as a backend declared twice, watched both ways, hides nothing.)
        ...config.problems.flatMap((p): LoaderFinding[] =>
          p.readAnyway === true ? [] : [{ backend: "-", module: p.file, problem: "config", message: `${p.message}. ${p.fix} (${p.code})` }],
        ),
      ],
      ...(options.registry === undefined ? {} : { registry: options.registry }),
      files: config.files,
      root: config.root,
      declarations: declarations(config),
      sets: config.dispatchables.map((d) => `${d.backend} [${d.set}] (${d.declaredIn})`),
      plugins: config.plugins,
      outside: outside.elsewhere,
    };
  };
  const miss = (m: DispatchMiss) => {
    if (m.backend === undefined) return;
    const backend = m.backend;
    // What the loader could not see of the backend is the cause, where there is a finding: it
    // replaces the generic "register an implementation" (a registry's hint may have said it already).
    for (const finding of findings())
      if (finding.backend === backend && !m.hints.some((hint) => hint.includes(finding.message))) m.hints.push(finding.message);
    // A registration module of this backend that threw (its warning comes a tick later, after a miss in this one).
    for (const { info, state, error } of hub().windows()) {
      if (info.backend !== backend || state !== "failed" || error === undefined) continue;
      m.hints.push(
        `${info.plugin}'s registration module for ${backend} (${info.module}) threw while it evaluated: ${error.message.replace(/\.$/, "")}; what it registers is missing.`,
      );
    }
    const declaring = config.plugins
      .filter((p) => p.registrations[backend] !== undefined)
      .map((p) => `${p.name} (${p.registrations[backend]})`);
    const watched = config.rules.some((r) => r.backend === backend || r.backend === undefined);
    m.context.push(
      `The dispatch-hook loader is installed (${mode}); it read ${config.files.length} file(s) from ${config.root}, ` +
        `${watched ? `watches ${declarations(config).join("; ")}` : `and no declaration covers the ${backend} backend`}; ` +
        `${declaring.length === 0 ? `no discovered plugin declares a registration module for ${backend}` : `plugins with a registration module for ${backend}: ${declaring.join(", ")}`}.`,
    );
  };
  // A module whose table was collected had signalled: it is never "loaded but never finished" (a require.cache reload).
  const signalled = (module: string) => {
    if (mode === "register") hooks.drain(); // off-thread, the hooks' word that they served it may still wait on the port
    if (loaded.has(module)) loaded.set(module, null);
  };
  const leave = hub().addLoader({ status, miss, ran: (module) => hooks.ran(module), signalled });

  let disposed = false;
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    hooks.detach();
    leave();
  };
  return {
    mode,
    get config() {
      hooks.drain();
      return config;
    },
    instrumented: () => {
      hooks.drain();
      return [...loaded.keys()];
    },
    findings,
    dispose,
    [Symbol.dispose]: dispose,
  };
}
