import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { discover, type HookConfig, type WatchRule } from "../hooks/discovery.js";
import { hookMode } from "../hooks/hook-mode.js";
import { registrationFault } from "../hooks/module-facts.js";
import { moduleFormat } from "../hooks/package-scope.js";
import { shortPath } from "../registry/audit-format.js";
import type { ErrorCode } from "../registry/errors.js";
import { didYouMean } from "../registry/options.js";
import { refusedDeclarations } from "./doctor-declarations.js";
import { uninstalled } from "./doctor-dependencies.js";
import {
  type BackendOutcome,
  type DoctorReport,
  doctorFormat,
  type Finding,
  loadBackends,
  unresolvedImplementations,
} from "./doctor-load.js";
import { checkNamedTypes } from "./doctor-types.js";
import { createStyle, type Io, parseCommand } from "./io.js";

export const doctorHelp = `Usage: dispatch-hook doctor [--load] [--json] [directory | entry]

Reads the dispatch-hook configuration of the project in the directory (default: the current one;
an entry file means its package): its package.json, every package.json in its dependency tree
(frameworks and plugins wherever they sit), and DISPATCH_HOOK_CONFIG. Prints:
  - the files it read;
  - the backends declared, and the module files they resolve to;
  - the plugins and their registration modules, and the op types they expect;
  - every problem, each with its fix.

  --load    also load each declared backend's dispatch module under the loader, in a child
            process (none of the app's own code runs), and say per backend what landed and from
            which plugin, what would wait, conflicts between plugins, registration modules that do
            not resolve or throw, lazily named implementations ("specifier#export") whose
            module or export does not exist, and named types ("specifier#Export") whose export
            does not exist or is only re-exported (without --load, doctor checks that each named
            type's and each lazily named implementation's module exists, and runs nothing)
  --json    print the report as one JSON document (format "dispatch-hook/doctor", version 2)
  --help    show this help

Exit code: 0 when nothing was found, 1 with findings (or no configuration at all), 2 for a usage
error.
`;

/** The backends a rule covers and their files: a named backend, or every name `{backend}` finds on disk. */
function resolveRule(rule: WatchRule): Array<{ backend: string; file: string; exists: boolean }> {
  const root = rule.roots[0] === undefined ? undefined : fileURLToPath(rule.roots[0]);
  if (root === undefined) return [];
  if (rule.backend !== undefined) {
    const file = join(root, rule.subpath);
    return [{ backend: rule.backend, file, exists: existsSync(file) }];
  }
  const segments = rule.subpath.split("/");
  const at = segments.findIndex((segment) => segment.includes("{backend}"));
  const [prefix, suffix] = (segments[at] as string).split("{backend}") as [string, string];
  let names: string[];
  try {
    names = readdirSync(join(root, ...segments.slice(0, at)));
  } catch {
    return [];
  }
  const out: Array<{ backend: string; file: string; exists: boolean }> = [];
  for (const name of names.sort()) {
    if (!name.startsWith(prefix) || !name.endsWith(suffix) || name.length <= prefix.length + suffix.length) continue;
    const backend = name.slice(prefix.length, name.length - suffix.length);
    const file = join(root, rule.subpath.replaceAll("{backend}", backend));
    if (existsSync(file)) out.push({ backend, file, exists: true });
  }
  return out;
}

/** A plugin's declaration, and the files of its registration modules (`fault`: why one cannot be loaded). */
type PluginReport = HookConfig["plugins"][number] & {
  readonly files: ReadonlyArray<{ backend: string; file: string; fault: string | undefined }>;
};

/** What reading the configuration finds: the backends and their files, the plugins, and the problems, each with its fix. */
function diagnose(config: HookConfig): { backends: Map<string, string[]>; plugins: PluginReport[]; findings: Finding[] } {
  const findings: Finding[] = [];
  const problem = (code: ErrorCode, message: string, fix: string) => findings.push({ kind: "config", code, message, fix });
  for (const p of config.problems) problem(p.code, p.message, p.fix);
  // A dependency that is not installed: whatever it declares, doctor cannot read, and the app cannot load.
  for (const name of uninstalled(config.root)) {
    problem(
      "ERR_DISPATCH_MODULE_NOT_FOUND",
      `the app's dependency ${name} is not installed where the app can see it: if it declares backends or registration modules, nothing of them is read or loaded`,
      "Install the app's dependencies (npm install), or remove the dependency.",
    );
  }
  const backends = new Map<string, string[]>();
  const plugins: PluginReport[] = [];
  const resolved = config.rules.map((rule) => ({ rule, all: resolveRule(rule) }));
  // A module a backend declared by name is that backend's, whatever a pattern would call it (matcher.ts).
  const named = new Set(resolved.flatMap(({ rule, all }) => (rule.backend === undefined ? [] : all.map((f) => f.file))));
  for (const { rule, all } of resolved) {
    const files = all.filter((f) => rule.backend !== undefined || !named.has(f.file));
    const label = rule.backend ?? `{backend} in ${rule.subpath}`;
    if (rule.roots.length === 0) {
      problem(
        "ERR_DISPATCH_MODULE_NOT_FOUND",
        `backend ${label} is declared in ${rule.declaredIn} for package ${rule.packageName ?? "?"}, which is not installed where the app can see it`,
        `Install ${rule.packageName ?? "the package"} as a direct dependency, or correct "package".`,
      );
    }
    for (const { backend, file, exists } of files) {
      backends.set(backend, [...(backends.get(backend) ?? []), file]);
      if (!exists)
        problem(
          "ERR_DISPATCH_MODULE_NOT_FOUND",
          `backend ${backend}: the declared module ${file} does not exist`,
          `Correct "module" in ${rule.declaredIn}, or add the file.`,
        );
    }
    if (rule.backend === undefined && all.length === 0 && rule.roots.length > 0) {
      problem(
        "ERR_DISPATCH_MODULE_NOT_FOUND",
        `the pattern ${rule.subpath} in ${rule.declaredIn} matches no file`,
        "Check the path and the {backend} placeholder.",
      );
    }
  }
  for (const plugin of config.plugins) {
    // The rule every host applies: a registration module that cannot be loaded is skipped.
    const files = Object.entries(plugin.registrations).map(([backend, url]) => {
      const file = fileURLToPath(url);
      return { backend, file, fault: registrationFault(file) };
    });
    plugins.push({ ...plugin, files });
    for (const { backend, file, fault } of files) {
      if (fault !== undefined) {
        problem(
          "ERR_DISPATCH_REGISTRATION_MODULE",
          `${plugin.name}: the registration module for ${backend}, ${file}, ${fault}`,
          `Correct "registrations.${backend}" in ${plugin.declaredIn} to name a JavaScript or TypeScript module file.`,
        );
      }
      if (!backends.has(backend) && !config.rules.some((r) => r.backend === backend)) {
        problem(
          "ERR_DISPATCH_UNKNOWN_BACKEND",
          `${plugin.name} registers for backend ${backend}, but no framework or app declares a ${backend} backend, so its registration module never loads${didYouMean(backend, [...backends.keys(), ...config.rules.flatMap((r) => r.backend ?? [])])}`,
          "Declare the backend (dispatchHook.backends) in the framework's or the app's package.json, or check the backend's name.",
        );
      }
    }
    for (const [backend, ops] of Object.entries(plugin.expects)) {
      if (plugin.registrations[backend] === undefined) {
        problem(
          "ERR_DISPATCH_REGISTRATION_MODULE",
          `${plugin.name} expects ${ops.join(", ")} on ${backend} but declares no registration module for it`,
          `Add "registrations": { "${backend}": "./…" } or register explicitly before ${backend} compiles.`,
        );
      }
    }
  }
  // A project that only chooses backends per call (createBackends, "dispatchables") needs no loader.
  if (config.rules.length === 0 && config.dispatchables.length === 0) {
    problem(
      "ERR_DISPATCH_NO_BACKENDS",
      `no backend declaration was found: ${config.root} and its dependency tree declare nothing, so the loader would watch nothing`,
      'Declare the backends in the framework\'s package.json ("dispatchHook": { "backends": … }), or run doctor from the app\'s directory.',
    );
  }
  return { backends, plugins, findings };
}

/**
 * Under the module.register hooks, which never see require(), a CommonJS dispatch module is served only
 * when imported. Whether the framework imports it is in code doctor does not run: a note, not a finding.
 */
function requireNotes(backends: ReadonlyMap<string, readonly string[]>): Finding[] {
  if (hookMode() !== "register") return [];
  const types = new Map<string, "module" | "commonjs">();
  return [...backends].flatMap(([backend, files]) =>
    files
      .filter((file) => moduleFormat(pathToFileURL(file).href, types) === "commonjs")
      .map((file) => ({
        kind: "loader" as const,
        backend,
        code: "ERR_DISPATCH_LOADER" as const,
        message:
          `${file} is CommonJS: on Node ${process.versions.node} the loader's module.register hooks never see require(), so this dispatch module is served only when it is imported, not when it is require()d ` +
          "(require(), createRequire(import.meta.url)(…)). doctor imported it; if the framework require()s it, its registrations never land and its calls miss (ERR_DISPATCH_NO_IMPL).",
        fix: "Have the framework import() the dispatch module, or run Node >=22.22.3 or >=24.11.1, where the loader uses module.registerHooks and sees require().",
      })),
  );
}

export async function doctorCommand(args: readonly string[], io: Io): Promise<number> {
  const parsed = parseCommand(args, io, "doctor", doctorHelp, {
    "--load": "boolean",
    "--json": "boolean",
    "--help": "boolean",
    "-h": "boolean",
  });
  if (typeof parsed === "number") return parsed;
  const { flags, rest, usage } = parsed;
  if (rest.length > 1) return usage(`unexpected argument ${rest[1]}`);
  const target = resolve(io.cwd, rest[0] ?? ".");
  if (!existsSync(target)) return usage(`${target} does not exist`);
  const isFile = statSync(target).isFile();
  const config = discover({
    ...(isFile ? { entry: target } : { root: target }),
    transitive: true,
    configFile: io.env.DISPATCH_HOOK_CONFIG || undefined,
  });
  const { backends, plugins, findings } = diagnose(config);
  const types = checkNamedTypes(config);
  findings.push(...types.findings);
  findings.push(...refusedDeclarations(config, findings));
  if (!flags["--load"]) findings.push(...unresolvedImplementations(config));
  const loaded = flags["--load"] ? await loadBackends(config, backends, io.env, types.resolved) : undefined;
  findings.push(...(loaded?.findings ?? []));
  const report: DoctorReport = {
    format: doctorFormat,
    version: 2,
    ok: findings.length === 0,
    loaded: loaded !== undefined,
    root: config.root,
    files: config.files,
    backends:
      loaded?.backends ??
      [...backends].map(([backend, modules]) => ({ backend, modules, required: [], loaded: false, landed: [], waiting: [] })),
    findings,
    notes: [...requireNotes(backends), ...(loaded?.notes ?? [])],
    ...(loaded === undefined ? {} : { audit: loaded.audit }),
  };
  if (flags["--json"]) io.out(`${JSON.stringify(report)}\n`);
  else io.out(`${formatDoctor(report, plugins, config.dispatchables, io)}\n`);
  return report.ok ? 0 : 1;
}

function formatDoctor(report: DoctorReport, plugins: readonly PluginReport[], sets: HookConfig["dispatchables"], io: Io): string {
  const style = createStyle({ isTTY: io.isTTY }, io.env);
  const rel = (file: string) => shortPath(file, io.cwd);
  const out: string[] = [style.bold(`dispatch-hook doctor${report.loaded ? " --load" : ""}`), ""];
  out.push(`started from ${rel(report.root) || "."}; read ${report.files.length} file(s):`);
  for (const file of report.files) out.push(`  ${rel(file)}`);
  out.push("");
  out.push(
    style.bold(report.loaded ? "backends, loaded under the loader in a child process (none of the app's own code ran)" : "backends"),
  );
  if (report.backends.length === 0) out.push("  (none declared)");
  const ops = (list: BackendOutcome["landed"]) => list.map((l) => (l.plugin === null ? l.op : `${l.op} (${l.plugin})`)).join(", ") || "-";
  for (const b of [...report.backends].sort((x, y) => x.backend.localeCompare(y.backend))) {
    const how = (m: string) => (b.required.includes(m) ? " (require()d, as CommonJS)" : "");
    out.push(`  ${b.backend.padEnd(10)} ${b.modules.map((m) => `${rel(m)}${how(m)}`).join(", ")}`);
    if (!report.loaded) continue;
    // A module that lacks its declared export loaded, and gave no table: its finding says so.
    const exportless = report.findings.some((f) => f.kind === "table" && f.backend === b.backend);
    out.push(
      `    ${b.loaded ? "landed " : style.red(exportless ? "loaded, no table at its declared export" : "did not load")} ${b.loaded ? ops(b.landed) : ""}`.trimEnd(),
    );
    if (b.waiting.length > 0) out.push(`    waiting ${ops(b.waiting)}`);
  }
  out.push("", style.bold("plugins"));
  if (plugins.length === 0) out.push("  (none found)");
  for (const plugin of plugins) {
    out.push(`  plugin ${plugin.name} (${rel(plugin.declaredIn)})`);
    for (const r of plugin.files) {
      const fault = r.fault === undefined ? "" : r.fault === "does not exist" ? " (missing)" : " (not a module)";
      out.push(`    ${r.backend}: registers from ${rel(r.file)}${fault}`);
    }
    for (const [backend, ops] of Object.entries(plugin.expects)) out.push(`    ${backend}: expects ${ops.join(", ")}`);
  }
  if (sets.length > 0) out.push("", style.bold("backends of backend sets (chosen per call)"));
  for (const d of sets) out.push(`  ${d.set}: ${d.backend} (${rel(d.declaredIn)})`);
  if (report.notes.length > 0) out.push("", style.bold("notes"));
  for (const n of report.notes)
    out.push(`  ! ${n.backend}: ${n.message}`, `    ${style.dim("code:")} ${n.code}`, `    ${style.dim("fix:")} ${n.fix}`);
  out.push("");
  if (report.findings.length === 0) {
    const asImported = report.notes.length === 0 ? "" : `, when imported (${report.notes.length} note(s) above)`;
    out.push(
      style.green(
        report.loaded
          ? `no problems found: every registration module ran, and every registration landed${asImported}`
          : "no problems found",
      ),
    );
  } else {
    out.push(style.red(`${report.findings.length} problem(s):`));
    for (const f of report.findings) {
      out.push(`  ${style.red("✗")} ${report.loaded ? `[${f.kind}] ` : ""}${f.message}`, `    ${style.dim("code:")} ${f.code}`);
      if (f.fix !== undefined) out.push(`    ${style.dim("fix:")} ${f.fix}`);
    }
  }
  return out.join("\n");
}
