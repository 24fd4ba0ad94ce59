/**
 * The `dispatchHook` field of a package.json (or of the DISPATCH_HOOK_CONFIG file, or given in
 * code), and its validation. Bad parts are reported as problems that name the file and the key, and
 * skipped; the good parts still count: a loader must never take down the app.
 */
import { path, url } from "../builtins.js";
import type { ConfigErrorCode } from "../registry/errors.js";
import { backendNameProblem, controlSeparators, didYouMean, suggest } from "../registry/options.js";
import type { ConfigProblem, DispatchableDeclaration, FieldSource, PluginDeclaration, WatchRule } from "./declarations.js";
import { findPackage, isPackageName, isRecord, packagePath, realDir } from "./package-scope.js";

const fieldKeys = ["backends", "registrations", "expects", "dispatchables"] as const;
const backendKeys = ["module", "export", "package"] as const;
const insidePackage = "Use a path inside the package, starting with ./";

/** Collects rules, plugins and problems from any number of fields. */
export class FieldReader {
  readonly rules: WatchRule[] = [];
  readonly plugins: PluginDeclaration[] = [];
  readonly dispatchables: DispatchableDeclaration[] = [];
  readonly problems: ConfigProblem[] = [];

  problem(
    source: FieldSource,
    key: string,
    message: string,
    fix: string,
    code: ConfigErrorCode = "ERR_DISPATCH_CONFIG_INVALID",
    readAnyway = false,
  ): void {
    // Where it is, each name once: the message may name the label already.
    const where = [...new Set([source.label, source.file])].filter((name) => !message.includes(name));
    const text = where.length === 0 ? message : `${message} (in ${where.join(", ")})`;
    this.problems.push({ code, file: source.file, key, message: text, fix, ...(readAnyway ? { readAnyway: true as const } : {}) });
  }

  #unknownKey(source: FieldSource, key: string, where: string, known: readonly string[]): void {
    const hint = suggest(key, known);
    this.problem(
      source,
      where === "" ? key : `${where}.${key}`,
      `Invalid option in ${source.label}: ${JSON.stringify(key)}${didYouMean(key, known)}`,
      hint === undefined ? `Remove ${JSON.stringify(key)}; known keys are ${known.join(", ")}.` : `Rename it to ${JSON.stringify(hint)}.`,
    );
  }

  #backendName(source: FieldSource, key: string, name: string): boolean {
    const problem = backendNameProblem(name);
    if (problem !== undefined) {
      this.problem(
        source,
        key,
        `${JSON.stringify(name)} is not a usable backend name: ${problem.reason}`,
        "Use a plain name such as numba.",
      );
    }
    return problem === undefined;
  }

  #record(source: FieldSource, key: string, value: unknown, example: string): value is Record<string, unknown> {
    if (!isRecord(value)) this.problem(source, key, `"${key}" in ${source.label} must be an object`, `Write "${key}": ${example}.`);
    return isRecord(value);
  }

  /** The DISPATCH_HOOK_CONFIG file holds a field's value; one shaped like a package.json is read too, and named. */
  fileField(source: FieldSource, value: unknown): void {
    const wrapped = isRecord(value) && Object.keys(value).length === 1 && isRecord(value.dispatchHook);
    if (wrapped) {
      this.problem(
        source,
        "dispatchHook",
        'the file holds a "dispatchHook" key, read as the field it wraps: move the keys inside "dispatchHook" to the top level',
        'Write the field\'s value alone, such as { "expects": { "cpu": ["Conv"] } }.',
        "ERR_DISPATCH_CONFIG_INVALID",
        true,
      );
    }
    this.field(source, wrapped ? value.dispatchHook : value);
  }

  /** Reads one `dispatchHook` field. */
  field(source: FieldSource, field: unknown): void {
    if (!isRecord(field)) {
      this.problem(source, "dispatchHook", `${source.label} must be an object`, 'Write "dispatchHook": { "backends": { … } }.');
      return;
    }
    for (const key of Object.keys(field)) if (!(fieldKeys as readonly string[]).includes(key)) this.#unknownKey(source, key, "", fieldKeys);
    if (field.backends !== undefined) this.#backends(source, field.backends);
    const registrations: Record<string, string> = Object.create(null);
    const expects: Record<string, readonly string[]> = Object.create(null);
    if (
      field.registrations !== undefined &&
      this.#record(source, "registrations", field.registrations, '{ "numba": "./dispatch/numba.js" }')
    ) {
      for (const [backend, value] of Object.entries(field.registrations)) {
        const key = `registrations.${backend}`;
        if (!this.#backendName(source, key, backend)) continue;
        if (typeof value !== "string") {
          this.problem(source, key, `"${key}" must be a path string`, 'Write a package-relative path such as "./dispatch/numba.js".');
          continue;
        }
        const resolved = packagePath(value);
        if (resolved.ok) registrations[backend] = url.pathToFileURL(path.join(source.dir, resolved.path)).href;
        else this.problem(source, key, `"${key}" ${JSON.stringify(value)} ${resolved.reason}`, insidePackage, "ERR_DISPATCH_CONFIG_PATH");
      }
    }
    if (field.expects !== undefined && this.#record(source, "expects", field.expects, '{ "numba": ["PoolLayer"] }')) {
      for (const [backend, ops] of Object.entries(field.expects)) {
        const key = `expects.${backend}`;
        if (!this.#backendName(source, key, backend)) continue;
        if (Array.isArray(ops) && ops.every((op) => typeof op === "string" && op.length > 0)) expects[backend] = [...ops];
        else
          this.problem(source, key, `"${key}" must be an array of op type names`, 'Write "expects": { "numba": ["PoolLayer", "Im2Col"] }.');
      }
    }
    if (field.dispatchables !== undefined) this.#dispatchables(source, field.dispatchables);
    if (Object.keys(registrations).length > 0 || Object.keys(expects).length > 0) {
      this.plugins.push({ name: source.packageName ?? source.file, declaredIn: source.file, registrations, expects });
    }
  }

  #dispatchables(source: FieldSource, value: unknown): void {
    const example = '{ "tensorlab": { "jax": { "primaryTypes": ["jax-like#Array"], "implementations": { "add": "./add.js#add" } } } }';
    if (!this.#record(source, "dispatchables", value, example)) return;
    for (const [set, backends] of Object.entries(value)) {
      if (!this.#record(source, `dispatchables.${set}`, backends, example)) continue;
      for (const [backend, declaration] of Object.entries(backends)) {
        const key = `dispatchables.${set}.${backend}`;
        if (!this.#backendName(source, key, backend) || !this.#record(source, key, declaration, '{ "implementations": { … } }')) continue;
        if (controlSeparators.test(backend)) {
          this.problem(source, key, `"${key}": a backend of a set cannot have "," or ">" in its name`, "Rename the backend.");
          continue;
        }
        const outside = namedPaths(declaration).find((name) => !packagePath(name.slice(0, name.lastIndexOf("#"))).ok);
        if (outside !== undefined) {
          const message = `"${key}" names ${JSON.stringify(outside)}, whose module leaves the package; it must point inside it`;
          this.problem(source, key, message, insidePackage, "ERR_DISPATCH_CONFIG_PATH");
          continue;
        }
        this.dispatchables.push({ set, backend, declaration, dir: source.dir, declaredIn: source.file });
      }
    }
  }

  #backends(source: FieldSource, backends: unknown): void {
    const example = '{ "numba": { "module": "./link/numba/dispatch/basic.js", "export": "numbaFuncify" } }';
    if (!this.#record(source, "backends", backends, example)) return;
    for (const [backend, declaration] of Object.entries(backends)) {
      const key = `backends.${backend}`;
      if (backend !== "*" && !this.#backendName(source, key, backend)) continue;
      if (!isRecord(declaration)) {
        const fix = `Write "${backend}": { "module": "./…", "export": "…" }.`;
        this.problem(source, key, `"${key}" must be an object with "module" and "export"`, fix);
        continue;
      }
      let bad = false;
      for (const k of Object.keys(declaration)) {
        if ((backendKeys as readonly string[]).includes(k)) continue;
        this.#unknownKey(source, k, key, backendKeys);
        bad = true;
      }
      const { module, export: exportName, package: packageName } = declaration;
      for (const [name, value] of [
        ["module", module],
        ["export", exportName],
      ] as const) {
        if (typeof value === "string" && value.length > 0) continue;
        this.problem(source, `${key}.${name}`, `"${key}.${name}" must be a non-empty string`, `Add "${name}" to the declaration.`);
        bad = true;
      }
      if (packageName !== undefined && (typeof packageName !== "string" || !isPackageName(packageName))) {
        this.problem(source, `${key}.package`, `"${key}.package" must be a package name`, 'Write a package name such as "tensorlab".');
        bad = true;
      }
      if (bad) continue;
      const resolved = packagePath(module as string);
      if (!resolved.ok) {
        const message = `"${key}.module" ${JSON.stringify(module)} ${resolved.reason}`;
        this.problem(source, `${key}.module`, message, insidePackage, "ERR_DISPATCH_CONFIG_PATH");
      } else if (backend === "*" && !resolved.path.includes("{backend}")) {
        const fix = 'Write "module": "./link/{backend}/dispatch/basic.js".';
        this.problem(source, `${key}.module`, `"backends.*" needs {backend} in its module path`, fix);
      } else {
        this.#rule(source, key, backend, resolved.path, exportName as string, packageName as string | undefined);
      }
    }
  }

  #rule(
    source: FieldSource,
    key: string,
    backend: string,
    subpathPattern: string,
    exportName: string,
    packageName: string | undefined,
  ): void {
    const owner = packageName ?? source.packageName;
    const found = packageName === undefined ? undefined : findPackage(source.from ?? source.dir, packageName)?.dir;
    const dir = packageName === undefined ? source.dir : found === undefined ? undefined : realDir(found);
    const subpath = backend === "*" ? subpathPattern : subpathPattern.replaceAll("{backend}", backend);
    const rule: WatchRule = {
      declaredIn: source.file,
      packageName: owner,
      roots: dir === undefined ? [] : [url.pathToFileURL(dir).href.replace(/\/?$/, "/")],
      subpath,
      backend: backend === "*" ? undefined : backend,
      exportName: backend === "*" ? exportName : exportName.replaceAll("{backend}", backend),
    };
    const existing = this.rules.find(
      (other) => other.subpath === rule.subpath && other.packageName === rule.packageName && other.backend === rule.backend,
    );
    if (existing !== undefined) {
      // The same declaration read again (a second copy of the package): one rule, both roots.
      for (const root of rule.roots) if (!existing.roots.includes(root)) (existing.roots as string[]).push(root);
      return;
    }
    // One module serves one backend's table: a second backend declared on it would never be watched (its plugins' modules never run).
    const shared = this.rules.find(
      (other) =>
        other.backend !== undefined &&
        other.subpath === rule.subpath &&
        other.packageName === rule.packageName &&
        other.roots.some((root) => rule.roots.includes(root)),
    );
    if (shared !== undefined && rule.backend !== undefined) {
      this.problem(
        source,
        key,
        `backends ${JSON.stringify(shared.backend)} and ${JSON.stringify(backend)} are declared on one module, ${owner ?? "?"}/${subpath}: a module serves one backend's table, so only ${shared.backend}'s is watched`,
        "Give each backend a module of its own (a module per backend that re-exports its table from the shared one is enough).",
        "ERR_DISPATCH_CONFIG_DUPLICATE",
      );
      return;
    }
    const clash = this.rules.find((other) => other.backend !== undefined && other.backend === rule.backend);
    if (clash !== undefined) {
      this.problem(
        source,
        key,
        `backend ${JSON.stringify(backend)} is declared twice with different modules: ${clash.packageName ?? "?"}/${clash.subpath} (in ${clash.declaredIn}) and ${owner ?? "?"}/${subpath}. Both are watched`,
        "Keep one declaration, or give the backends different names.",
        "ERR_DISPATCH_CONFIG_DUPLICATE",
        true,
      );
    }
    this.rules.push(rule);
  }
}

/** The "path#export" names a backend set's declaration in a package.json gives: implementations, wrapping, types. */
function namedPaths(declaration: Record<string, unknown>): string[] {
  const { implementations, wraps, primaryTypes, secondaryTypes } = declaration;
  const values = [
    ...Object.values(isRecord(implementations) ? implementations : {}),
    ...Object.values(isRecord(wraps) ? wraps : {}),
    ...(Array.isArray(primaryTypes) ? primaryTypes : []),
    ...(Array.isArray(secondaryTypes) ? secondaryTypes : []),
  ];
  // Relative, absolute, a drive or a file: URL: a path (a bare specifier names a package, resolved as Node does).
  const path = /^[~=@]?(\.\.?[\\/]|[\\/]|[A-Za-z]:|file:)/;
  return values.flatMap((v) => (typeof v === "string" && path.test(v) && v.includes("#") ? [v.replace(/^[~=@]/, "")] : []));
}

/** Warns of each config problem once per `said` set, with its code: the loader and the adapters alike. */
export function warnConfigProblems(problems: readonly ConfigProblem[], said: Set<string>): void {
  for (const problem of problems) {
    const text = `${problem.message}. ${problem.fix}`;
    if (said.has(text)) continue;
    said.add(text);
    process.emitWarning(text, { code: problem.code });
  }
}
