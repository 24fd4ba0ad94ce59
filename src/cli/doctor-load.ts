/**
 * `dispatch-hook doctor --load`: a child under the loader (doctor-probe.ts) imports each declared
 * dispatch module, so the plugins' registration modules run as in the app (none of the app's own code
 * does), and loads each lazily named implementation. Its audit record says what landed, and what not.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseLazyImpl, resolvesFrom } from "../dispatchable/impl-table.js";
import type { HookConfig } from "../hooks/discovery.js";
import { hasModuleSyntax } from "../hooks/export-names.js";
import { hookMode } from "../hooks/hook-mode.js";
import { loaderVariable } from "../hooks/install.js";
import { moduleFormat } from "../hooks/package-scope.js";
import { foldRun, type RunAudit } from "../hooks/run-fold.js";
import { runDirVariable } from "../registry/run-records.js";
import { coded, distinct, type Finding, type FindingKind, problemCodes, unrequirable } from "./doctor-findings.js";
import type { ProbeInput, ProbeOutput } from "./doctor-probe.js";
import type { NamedTypeEntry } from "./doctor-types.js";
import { misspeltBackends, unseenPlugins } from "./doctor-unseen-plugins.js";

export type { Finding } from "./doctor-findings.js";

export const doctorFormat = "dispatch-hook/doctor";

export interface BackendOutcome {
  readonly backend: string;
  readonly modules: readonly string[];
  /** The modules doctor --load loaded with require(), as a CommonJS framework does (the others: with import()). */
  readonly required: readonly string[];
  readonly loaded: boolean;
  /** Op types that landed, and the plugin whose registration module registered each (null: not a plugin's). */
  readonly landed: ReadonlyArray<{ readonly op: string; readonly plugin: string | null }>;
  /** Registrations that would wait: made, but no table of the backend took them. */
  readonly waiting: ReadonlyArray<{ readonly op: string; readonly plugin: string | null }>;
}

/** The JSON document of `dispatch-hook doctor --json` (format "dispatch-hook/doctor", version 2). */
export interface DoctorReport {
  readonly format: typeof doctorFormat;
  readonly version: 2;
  readonly ok: boolean;
  /** Whether the backends were loaded (--load), or only the configuration was read. */
  readonly loaded: boolean;
  readonly root: string;
  readonly files: readonly string[];
  readonly backends: readonly BackendOutcome[];
  readonly findings: readonly Finding[];
  /** What doctor cannot prove either way, because it depends on the app's own code: no failure. */
  readonly notes: readonly Finding[];
  /** The child's audit, with --load. */
  readonly audit?: RunAudit;
}

const probeFile = fileURLToPath(new URL("./doctor-probe.js", import.meta.url));

/** The lazily named implementations that package.json declares for backend sets, a wrapping backend's convert and restore among them. */
function lazyImplementations(config: HookConfig): ProbeInput["lazy"] {
  return config.dispatchables.flatMap((d) => {
    const { implementations, wraps } = d.declaration as { implementations?: unknown; wraps?: unknown };
    const named = Object.entries(typeof implementations === "object" && implementations !== null ? implementations : {});
    if (typeof wraps === "object" && wraps !== null) {
      const { convert, restore } = wraps as { convert?: unknown; restore?: unknown };
      named.push(["wraps.convert", convert], ["wraps.restore", restore]);
    }
    return named.flatMap(([fn, label]) =>
      typeof label === "string" ? [{ set: d.set, backend: d.backend, fn, label, base: d.dir, declaredIn: d.declaredIn }] : [],
    );
  });
}

/**
 * Without --load: each lazily named implementation's module resolves, as its set resolves it, and
 * nothing is loaded (--load's child loads each, and checks its export too).
 */
export function unresolvedImplementations(config: HookConfig): Finding[] {
  return lazyImplementations(config).flatMap((lazy) => {
    const parsed = parseLazyImpl(lazy.label);
    // A malformed name is the set's own declaration problem.
    if (parsed === undefined || resolvesFrom(lazy.base, parsed.specifier)) return [];
    const message = `backend ${lazy.backend} of ${lazy.set}: the implementation of ${lazy.fn}, ${JSON.stringify(lazy.label)}, names a module that does not resolve from ${lazy.base}, so its first call fails`;
    const fix = `Correct the implementation's name in ${lazy.declaredIn} (doctor --load also checks its export).`;
    return [
      { kind: "implementation" as const, backend: `${lazy.backend} [${lazy.set}]`, code: "ERR_DISPATCH_IMPL_LOAD" as const, message, fix },
    ];
  });
}

/** Runs the probe in a child under the loader; resolves to its audit and what failed to load. */
async function runProbe(root: string, input: ProbeInput, env: Record<string, string | undefined>) {
  const work = mkdtempSync(join(tmpdir(), "dispatch-hook-doctor-"));
  try {
    const runDir = join(work, "run");
    writeFileSync(join(work, "input.json"), JSON.stringify(input));
    const exit = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [probeFile, join(work, "input.json"), join(work, "output.json")], {
        cwd: root,
        env: { ...env, [runDirVariable]: runDir, [loaderVariable]: "", DISPATCH_HOOK_AUDIT: "" },
        // The modules' own output never mixes with the report (or the JSON) on stdout.
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => process.stderr.write(chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stderr }));
    });
    let output: ProbeOutput | undefined;
    try {
      output = JSON.parse(readFileSync(join(work, "output.json"), "utf8")) as ProbeOutput;
    } catch {}
    const failures = [...(output?.failures ?? [])];
    if (output === undefined || output.loading !== undefined) {
      const during =
        output?.loading === undefined
          ? ""
          : ` while ${output.loading}'s dispatch module loaded (the module itself, or a registration module it ran)`;
      const said = exit.stderr.trim();
      failures.push({
        kind: "dispatch-module",
        backend: output?.loading ?? "?",
        code: undefined,
        message: `the probe stopped: something ended the process (exit code ${exit.code})${during}${said === "" ? "" : `: ${said}`}`,
      });
    }
    return { audit: foldRun(runDir), failures };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Loads every declared backend under the loader: what landed, and what went wrong beyond what reading the config found. */
export async function loadBackends(
  config: HookConfig,
  backends: ReadonlyMap<string, readonly string[]>,
  env: Record<string, string | undefined>,
  namedTypes: readonly NamedTypeEntry[],
): Promise<Pick<DoctorReport, "backends" | "findings" | "notes"> & { audit: RunAudit }> {
  // Where the hooks see require(), a CommonJS dispatch module is required, as the framework's own
  // require() calls load it: its registration modules are then required too, and one that only
  // import() can load (an ES module with a top-level await) fails as it will in the app. Under the
  // module.register hooks, which never see require(), it is imported (doctor.ts adds a note).
  const types = new Map<string, "module" | "commonjs">();
  // (A .js file of a package with no "type" whose syntax is an ES module's is one, as Node reads it.)
  const required = (file: string) =>
    hookMode() === "registerHooks" &&
    moduleFormat(pathToFileURL(file).href, types) === "commonjs" &&
    !(file.endsWith(".js") && hasModuleSyntax(readFileSync(file, "utf8")));
  const input: ProbeInput = {
    root: config.root,
    // A declared module that does not exist has its finding from reading the config: it is not loaded too.
    backends: [...backends].flatMap(([backend, files]) =>
      files.filter((file) => existsSync(file)).map((file) => ({ backend, file, require: required(file) })),
    ),
    lazy: lazyImplementations(config),
    types: namedTypes,
  };
  const { audit, failures } = await runProbe(config.root, input, env);
  const reports = audit.processes.flatMap((p) => (p.report === undefined ? [] : [p.report]));
  const findings: Finding[] = [];
  const failedBackends = new Set<string>();
  for (const f of failures) {
    if (f.kind === "type") {
      findings.push(f.finding);
      continue;
    }
    if (f.kind === "implementation") {
      findings.push({
        kind: f.kind,
        backend: f.backend,
        ...coded("ERR_DISPATCH_IMPL_LOAD", f.code),
        message: f.message,
        ...(f.declaredIn === undefined ? {} : { fix: `Correct the implementation's name in ${f.declaredIn}.` }),
      });
      continue;
    }
    failedBackends.add(f.backend);
    // Whose module failed: a plugin's registration module (named in the error or its stack), or the framework's own.
    const text = `${f.message}\n${f.stack ?? ""}`;
    const culprit = config.plugins.flatMap((p) => {
      const href = p.registrations[f.backend];
      return href !== undefined && (text.includes(href) || text.includes(fileURLToPath(href)))
        ? [{ plugin: p.name, href, declaredIn: p.declaredIn }]
        : [];
    })[0];
    findings.push(
      culprit === undefined
        ? {
            kind: "dispatch-module",
            backend: f.backend,
            ...coded("ERR_DISPATCH_MODULE_LOAD", f.code),
            message: `backend ${f.backend}: its dispatch module failed to load: ${f.message}`,
          }
        : {
            kind: "registration-module",
            backend: f.backend,
            ...coded("ERR_DISPATCH_REGISTRATION_MODULE", f.code),
            message: `${culprit.plugin}: its registration module for ${f.backend} (${fileURLToPath(culprit.href)}) ${f.code === "ERR_MODULE_NOT_FOUND" ? "imports a module that does not resolve" : "threw"}: ${f.message}`,
            fix: `Fix the module, or the "registrations.${f.backend}" entry in ${culprit.declaredIn}.`,
          },
    );
  }
  for (const report of reports) {
    for (const plugin of report.plugins) {
      // A backend whose dispatch module failed has its finding above, and a registration module that
      // does not exist has one from reading the config: what follows from either is not repeated.
      if (plugin.state === "loaded" || plugin.state === "missing" || failedBackends.has(plugin.backend)) continue;
      const code = plugin.error?.code;
      if (code?.startsWith("ERR_REQUIRE_") === true) {
        findings.push(unrequirable(plugin, code, config));
        continue;
      }
      findings.push({
        kind: "registration-module",
        backend: plugin.backend,
        ...coded("ERR_DISPATCH_REGISTRATION_MODULE", plugin.error?.code),
        message: `${plugin.plugin}: the registration module for ${plugin.backend} (${plugin.module}) ${plugin.state === "failed" ? "threw" : "never finished"}${plugin.error === undefined ? "" : `: ${plugin.error.message}`}`,
      });
    }
    for (const problem of report.problems) {
      const kind: FindingKind = ["conflict", "failed", "missing", "pending", "loader", "implementation", "declaration", "table"].includes(
        problem.kind,
      )
        ? (problem.kind as FindingKind)
        : "other";
      if (failedBackends.has(problem.backend) && kind !== "conflict") continue;
      // A registration module's window problem (op "-") says again what its plugin's finding said.
      if (problem.kind === "failed" && problem.op === "-") continue;
      // A declaration the loader could not read: reading the config reported it already.
      if (problem.kind === "loader" && config.problems.some((p) => problem.message.startsWith(p.message))) continue;
      // With no backend declared, the loader's "watches nothing" follows from the config: reading
      // it said so already, or backend sets that are chosen per call need nothing watched.
      if (input.backends.length === 0 && problem.message.includes("found no backend declaration")) continue;
      // A lazy implementation the probe loaded and the audit resolved: one finding.
      if (findings.some((f) => f.message === problem.message)) continue;
      findings.push({ kind, backend: problem.backend, ...coded(problemCodes[problem.kind], problem.code), message: problem.message });
    }
  }
  const unreadable = (message: string) => findings.push({ kind: "other", code: "ERR_DISPATCH_AUDIT_UNREADABLE", message });
  for (const u of audit.unreadable) unreadable(`the probe's audit record ${u.file}: ${u.why}`);
  if (reports.length === 0 && input.backends.length > 0) unreadable("the probe wrote no audit record");
  const outcomes: BackendOutcome[] = [...backends].map(([backend, modules]) => {
    const regs = reports.flatMap((r) => r.registrations.filter((g) => g.backend === backend));
    const outside = reports.flatMap((r) => r.outside.filter((w) => w.backend === backend));
    return {
      backend,
      modules,
      required: input.backends.filter((b) => b.backend === backend && b.require).map((b) => b.file),
      loaded: reports.some((r) => r.backends.some((b) => b.backend === backend && b.loaded)),
      landed: [
        ...regs.filter((g) => g.state === "applied").map((g) => ({ op: g.op, plugin: g.origin?.plugin ?? null })),
        ...outside.map((w) => ({ op: w.op, plugin: w.plugin })),
      ],
      waiting: regs.filter((g) => g.state === "pending").map((g) => ({ op: g.op, plugin: g.origin?.plugin ?? null })),
    };
  });
  // A module that loaded without its table reaching dispatch-hook, where nothing above says why: what its plugins want never lands.
  for (const outcome of outcomes) {
    const wanting = config.plugins.filter(
      (p) => p.registrations[outcome.backend] !== undefined || p.expects[outcome.backend] !== undefined,
    );
    if (outcome.loaded || wanting.length === 0 || !input.backends.some((b) => b.backend === outcome.backend)) continue;
    if (findings.some((f) => f.backend === outcome.backend)) continue;
    findings.push({
      kind: "dispatch-module",
      backend: outcome.backend,
      code: "ERR_DISPATCH_LOADER",
      message: `backend ${outcome.backend}: its dispatch module loaded, but no table of it reached dispatch-hook, so what ${wanting.map((p) => p.name).join(", ")} ${wanting.length === 1 ? "wants" : "want"} there never lands`,
      fix: "The loader did not see the module load: another loader served it (tsx's require() of a .cts file, say; Node's own type stripping is served), or it was required where the hooks cannot see require() (Node 20). Run the app under DISPATCH_HOOK_AUDIT=strict to see what it finds.",
    });
  }
  findings.push(...unseenPlugins(config, outcomes, reports));
  return { backends: outcomes, findings: distinct(findings), notes: misspeltBackends(config, reports), audit };
}
