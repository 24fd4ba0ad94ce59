import { existsSync, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { discover, type HookConfig, type WatchRule } from "../hooks/discovery.js";
import type { Io } from "./io.js";
import { createStyle } from "./style.js";

export const doctorHelp = `Usage: dispatch-hook doctor [directory]

Reads the dispatch-hook configuration of the project in the directory (default: the current one):
its package.json, every package.json in its dependency tree (frameworks and plugins wherever they
sit), and DISPATCH_HOOK_CONFIG. Prints:
  - the files it read;
  - the backends declared, and the module files they resolve to;
  - the plugins and their registration modules, and the op types they expect;
  - every problem, each with its fix.

Exit code: 1 if there is a problem or no configuration at all, otherwise 0.
`;

interface Finding {
  readonly message: string;
  readonly fix: string;
}

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

/** Everything doctor knows, as data: what it prints, and what a test asserts. */
interface PluginReport {
  readonly name: string;
  readonly declaredIn: string;
  readonly registrations: ReadonlyArray<{ readonly backend: string; readonly file: string; readonly exists: boolean }>;
  readonly expects: ReadonlyArray<{ readonly backend: string; readonly ops: readonly string[] }>;
}

export function diagnose(config: HookConfig): { backends: Map<string, string[]>; plugins: PluginReport[]; problems: Finding[] } {
  const problems: Finding[] = config.problems.map((p) => ({ message: p.message, fix: p.fix }));
  const backends = new Map<string, string[]>();
  const plugins: PluginReport[] = [];
  for (const rule of config.rules) {
    const files = resolveRule(rule);
    const label = rule.backend ?? `{backend} in ${rule.subpath}`;
    if (rule.roots.length === 0) {
      problems.push({
        message: `backend ${label} is declared in ${rule.declaredIn} for package ${rule.packageName ?? "?"}, which is not installed where the app can see it`,
        fix: `Install ${rule.packageName ?? "the package"} as a direct dependency, or correct "package".`,
      });
    }
    for (const { backend, file, exists } of files) {
      const list = backends.get(backend) ?? [];
      list.push(file);
      backends.set(backend, list);
      if (!exists) {
        problems.push({
          message: `backend ${backend}: the declared module ${file} does not exist`,
          fix: `Correct "module" in ${rule.declaredIn}, or add the file.`,
        });
      }
    }
    if (rule.backend === undefined && files.length === 0 && rule.roots.length > 0) {
      problems.push({
        message: `the pattern ${rule.subpath} in ${rule.declaredIn} matches no file`,
        fix: "Check the path and the {backend} placeholder.",
      });
    }
  }
  for (const plugin of config.plugins) {
    const registrations = Object.entries(plugin.registrations).map(([backend, url]) => {
      const file = fileURLToPath(url);
      return { backend, file, exists: existsSync(file) };
    });
    plugins.push({
      name: plugin.name,
      declaredIn: plugin.declaredIn,
      registrations,
      expects: Object.entries(plugin.expects).map(([backend, ops]) => ({ backend, ops })),
    });
    for (const { backend, file, exists } of registrations) {
      if (!exists) {
        problems.push({
          message: `${plugin.name}: the registration module for ${backend}, ${file}, does not exist`,
          fix: `Correct "registrations.${backend}" in ${plugin.declaredIn}.`,
        });
      }
      if (!backends.has(backend) && !config.rules.some((r) => r.backend === backend)) {
        problems.push({
          message: `${plugin.name} registers for backend ${backend}, but no framework or app declares a ${backend} backend, so its registration module never loads`,
          fix: "Declare the backend (dispatchHook.backends) in the framework's or the app's package.json, or check the backend's name.",
        });
      }
    }
    for (const [backend, ops] of Object.entries(plugin.expects)) {
      if (plugin.registrations[backend] === undefined) {
        problems.push({
          message: `${plugin.name} expects ${ops.join(", ")} on ${backend} but declares no registration module for it`,
          fix: `Add "registrations": { "${backend}": "./…" } or register explicitly before ${backend} compiles.`,
        });
      }
    }
  }
  return { backends, plugins, problems };
}

export function doctorCommand(args: readonly string[], io: Io): number {
  if (args.includes("--help") || args.includes("-h")) {
    io.out(doctorHelp);
    return 0;
  }
  const flags = args.filter((arg) => arg.startsWith("-"));
  if (flags.length > 0 || args.length > 1) {
    io.err(`dispatch-hook doctor: unknown argument ${flags[0] ?? args[1]}\n\n${doctorHelp}`);
    return 2;
  }
  const style = createStyle({ isTTY: io.isTTY }, io.env);
  const root = resolve(io.cwd, args[0] ?? ".");
  const config = discover({ root, transitive: true, configFile: io.env.DISPATCH_HOOK_CONFIG || undefined });
  const { backends, plugins, problems } = diagnose(config);
  if (config.rules.length === 0) {
    problems.push({
      message: `no backend declaration was found: ${config.root} and its dependency tree declare nothing, so the loader would watch nothing`,
      fix: 'Declare the backends in the framework\'s package.json ("dispatchHook": { "backends": … }), or run doctor from the app\'s directory.',
    });
  }
  const rel = (file: string) => {
    const r = relative(io.cwd, file);
    return r.length < file.length ? r : file;
  };
  const out: string[] = [style.bold("dispatch-hook doctor"), ""];
  out.push(`started from ${rel(config.root) || "."}; read ${config.files.length} file(s):`);
  for (const file of config.files) out.push(`  ${rel(file)}`);
  out.push("");
  out.push(style.bold("backends"));
  if (backends.size === 0) out.push("  (none declared)");
  for (const [backend, files] of [...backends].sort(([a], [b]) => a.localeCompare(b)))
    out.push(`  ${backend.padEnd(10)} ${files.map(rel).join(", ")}`);
  out.push("", style.bold("plugins"));
  if (plugins.length === 0) out.push("  (none found)");
  for (const plugin of plugins) {
    out.push(`  plugin ${plugin.name} (${rel(plugin.declaredIn)})`);
    for (const r of plugin.registrations) out.push(`    ${r.backend}: registers from ${rel(r.file)}${r.exists ? "" : " (missing)"}`);
    for (const e of plugin.expects) out.push(`    ${e.backend}: expects ${e.ops.join(", ")}`);
  }
  out.push("");
  if (problems.length === 0) {
    out.push(style.green("no problems found"));
  } else {
    out.push(style.red(`${problems.length} problem(s):`));
    for (const problem of problems) out.push(`  ${style.red("✗")} ${problem.message}`, `    ${style.dim("fix:")} ${problem.fix}`);
  }
  io.out(`${out.join("\n")}\n`);
  return problems.length === 0 ? 0 : 1;
}
