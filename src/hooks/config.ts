/** One backend declaration, as written in package.json `dispatchHook.backends`. */

// process.getBuiltinModule, not `import`: building the ES module facade of a builtin costs
// start-up time (node:fs alone about 3 ms), and the loader runs at the start of every process.
const { existsSync, readFileSync, realpathSync } = process.getBuiltinModule("node:fs");
const { dirname, isAbsolute, join, posix, resolve, sep } = process.getBuiltinModule("node:path");
const { pathToFileURL } = process.getBuiltinModule("node:url");

export interface BackendDeclaration {
  /** Package-relative path of the dispatch module; may contain `{backend}`. */
  readonly module: string;
  /** The export that holds the table; may contain `{backend}`. */
  readonly export: string;
  /** Whose files `module` names, when it is another package than the declaring one. */
  readonly package?: string;
}

/** The `dispatchHook` field of a package.json (or of the file named by DISPATCH_HOOK_CONFIG). */
export interface DispatchHookField {
  /** Backend name → declaration. The key "*" with `{backend}` in `module` matches any backend. */
  readonly backends?: Readonly<Record<string, BackendDeclaration>>;
  /** Backend → package-relative registration module, loaded exactly when that backend loads. */
  readonly registrations?: Readonly<Record<string, string>>;
  /** Backend → op type names that must land. */
  readonly expects?: Readonly<Record<string, readonly string[]>>;
}

/** A resolved rule: which module URLs are a backend's dispatch module. Plain data, so it crosses threads. */
export interface WatchRule {
  /** The file that declared it. */
  readonly declaredIn: string;
  /** The package whose files are watched; every copy of it in any node_modules matches. */
  readonly packageName: string | undefined;
  /** Directories of known copies, as file URLs ending in "/" (workspaces and symlinks included). */
  readonly roots: readonly string[];
  /** Package-relative path, without "./", possibly with `{backend}`. */
  readonly subpath: string;
  /** Set for a named backend; undefined when the backend comes from `{backend}` in the path. */
  readonly backend: string | undefined;
  readonly exportName: string;
}

export interface PluginDeclaration {
  readonly name: string;
  readonly declaredIn: string;
  /** Backend → file URL of the registration module. */
  readonly registrations: Readonly<Record<string, string>>;
  readonly expects: Readonly<Record<string, readonly string[]>>;
}

export interface ConfigProblem {
  readonly code: "ERR_DISPATCH_CONFIG_INVALID" | "ERR_DISPATCH_CONFIG_PATH" | "ERR_DISPATCH_CONFIG_JSON" | "ERR_DISPATCH_CONFIG_DUPLICATE";
  readonly file: string;
  readonly key: string;
  readonly message: string;
  readonly fix: string;
}

export interface HookConfig {
  readonly rules: readonly WatchRule[];
  readonly plugins: readonly PluginDeclaration[];
  readonly problems: readonly ConfigProblem[];
  /** Every package.json (or config file) that was read. */
  readonly files: readonly string[];
}

const fieldKeys = ["backends", "registrations", "expects"] as const;
const backendKeys = ["module", "export", "package"] as const;
const reserved = new Set(["__proto__", "constructor", "prototype"]);
const nameSegment = /^(?:@[a-z0-9._~-]+\/)?[a-z0-9._~-]+$/i;

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min(current + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length] as number;
}

/** The nearest known key, if it is near enough to be a typo. */
export function suggest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A package-relative path that stays inside its package, normalised without "./"; or a reason. */
function packagePath(value: string): { ok: true; path: string } | { ok: false; reason: string } {
  if (value.length === 0) return { ok: false, reason: "is empty" };
  if (isAbsolute(value) || /^[a-z]:[\\/]/i.test(value) || value.startsWith("\\") || /^[a-z][a-z0-9+.-]*:/i.test(value)) {
    return { ok: false, reason: "is absolute; it must be relative to the package, like ./dispatch/numba.js" };
  }
  const normal = posix.normalize(value.replaceAll("\\", "/"));
  if (normal === ".." || normal.startsWith("../")) return { ok: false, reason: "leaves the package; it must point inside it" };
  if (value.includes("\0")) return { ok: false, reason: "contains a NUL character" };
  return { ok: true, path: normal.replace(/^\.\//, "") };
}

interface Source {
  /** The package.json (or config file) path. */
  readonly file: string;
  /** How the file is named in messages: `package.json "dispatchHook" of ml-ops`. */
  readonly label: string;
  readonly packageName: string | undefined;
  /** The directory paths resolve against, as the real path. */
  readonly dir: string;
  /** Directories of packages that can be named with `package`, for locating them. */
  readonly lookup: (name: string) => string | undefined;
}

class Collector {
  readonly rules: WatchRule[] = [];
  readonly plugins: PluginDeclaration[] = [];
  readonly problems: ConfigProblem[] = [];
  readonly files: string[] = [];

  problem(source: Source, code: ConfigProblem["code"], key: string, message: string, fix: string): void {
    this.problems.push({ code, file: source.file, key, message: `${message} (in ${source.label}, ${source.file})`, fix });
  }

  unknownKey(source: Source, key: string, where: string, known: readonly string[]): void {
    const hint = suggest(key, known);
    this.problem(
      source,
      "ERR_DISPATCH_CONFIG_INVALID",
      where === "" ? key : `${where}.${key}`,
      `Invalid option in ${source.label}: ${JSON.stringify(key)}${hint === undefined ? "" : ` (did you mean ${JSON.stringify(hint)}?)`}`,
      hint === undefined ? `Remove ${JSON.stringify(key)}; known keys are ${known.join(", ")}.` : `Rename it to ${JSON.stringify(hint)}.`,
    );
  }

  /** Reads one `dispatchHook` field. Bad parts are reported and skipped; good parts still count. */
  field(source: Source, field: unknown): void {
    if (!isRecord(field)) {
      this.problem(
        source,
        "ERR_DISPATCH_CONFIG_INVALID",
        "dispatchHook",
        `${source.label} must be an object`,
        'Write "dispatchHook": { "backends": { … } }.',
      );
      return;
    }
    for (const key of Object.keys(field)) {
      if (!(fieldKeys as readonly string[]).includes(key)) this.unknownKey(source, key, "", fieldKeys);
    }
    if (field.backends !== undefined) this.backends(source, field.backends);
    const registrations: Record<string, string> = Object.create(null);
    const expects: Record<string, readonly string[]> = Object.create(null);
    if (field.registrations !== undefined) {
      if (!isRecord(field.registrations)) {
        this.problem(
          source,
          "ERR_DISPATCH_CONFIG_INVALID",
          "registrations",
          `"registrations" in ${source.label} must be an object`,
          'Write "registrations": { "numba": "./dispatch/numba.js" }.',
        );
      } else {
        for (const [backend, value] of Object.entries(field.registrations)) {
          if (!this.backendName(source, `registrations.${backend}`, backend)) continue;
          if (typeof value !== "string") {
            this.problem(
              source,
              "ERR_DISPATCH_CONFIG_INVALID",
              `registrations.${backend}`,
              `"registrations.${backend}" must be a path string`,
              'Write a package-relative path such as "./dispatch/numba.js".',
            );
            continue;
          }
          const path = packagePath(value);
          if (!path.ok) {
            this.problem(
              source,
              "ERR_DISPATCH_CONFIG_PATH",
              `registrations.${backend}`,
              `"registrations.${backend}" ${JSON.stringify(value)} ${path.reason}`,
              "Use a path inside the package, starting with ./",
            );
            continue;
          }
          registrations[backend] = pathToFileURL(join(source.dir, path.path)).href;
        }
      }
    }
    if (field.expects !== undefined) {
      if (!isRecord(field.expects)) {
        this.problem(
          source,
          "ERR_DISPATCH_CONFIG_INVALID",
          "expects",
          `"expects" in ${source.label} must be an object`,
          'Write "expects": { "numba": ["PoolLayer"] }.',
        );
      } else {
        for (const [backend, ops] of Object.entries(field.expects)) {
          if (!this.backendName(source, `expects.${backend}`, backend)) continue;
          if (!Array.isArray(ops) || ops.some((op) => typeof op !== "string" || op.length === 0)) {
            this.problem(
              source,
              "ERR_DISPATCH_CONFIG_INVALID",
              `expects.${backend}`,
              `"expects.${backend}" must be an array of op type names`,
              'Write "expects": { "numba": ["PoolLayer", "Im2Col"] }.',
            );
            continue;
          }
          expects[backend] = [...ops];
        }
      }
    }
    if (Object.keys(registrations).length > 0 || Object.keys(expects).length > 0) {
      this.plugins.push({ name: source.packageName ?? source.file, declaredIn: source.file, registrations, expects });
    }
  }

  backendName(source: Source, key: string, name: string): boolean {
    if (name.length === 0 || reserved.has(name) || /[\s/\\]/.test(name)) {
      this.problem(
        source,
        "ERR_DISPATCH_CONFIG_INVALID",
        key,
        `${JSON.stringify(name)} is not a usable backend name`,
        "Use a plain name such as numba.",
      );
      return false;
    }
    return true;
  }

  backends(source: Source, backends: unknown): void {
    if (!isRecord(backends)) {
      this.problem(
        source,
        "ERR_DISPATCH_CONFIG_INVALID",
        "backends",
        `"backends" in ${source.label} must be an object`,
        'Write "backends": { "numba": { "module": "./link/numba/dispatch/basic.js", "export": "numbaFuncify" } }.',
      );
      return;
    }
    for (const [backend, declaration] of Object.entries(backends)) {
      const key = `backends.${backend}`;
      if (backend !== "*" && !this.backendName(source, key, backend)) continue;
      if (!isRecord(declaration)) {
        this.problem(
          source,
          "ERR_DISPATCH_CONFIG_INVALID",
          key,
          `"${key}" must be an object with "module" and "export"`,
          `Write "${backend}": { "module": "./…", "export": "…" }.`,
        );
        continue;
      }
      let bad = false;
      for (const k of Object.keys(declaration)) {
        if (!(backendKeys as readonly string[]).includes(k)) {
          this.unknownKey(source, k, key, backendKeys);
          bad = true;
        }
      }
      const { module, export: exportName, package: packageName } = declaration;
      for (const [name, value] of [
        ["module", module],
        ["export", exportName],
      ] as const) {
        if (typeof value !== "string" || value.length === 0) {
          this.problem(
            source,
            "ERR_DISPATCH_CONFIG_INVALID",
            `${key}.${name}`,
            `"${key}.${name}" must be a non-empty string`,
            `Add "${name}" to the declaration.`,
          );
          bad = true;
        }
      }
      if (packageName !== undefined && (typeof packageName !== "string" || !nameSegment.test(packageName))) {
        this.problem(
          source,
          "ERR_DISPATCH_CONFIG_INVALID",
          `${key}.package`,
          `"${key}.package" must be a package name`,
          'Write a package name such as "tensorlab".',
        );
        bad = true;
      }
      if (bad) continue;
      const path = packagePath(module as string);
      if (!path.ok) {
        this.problem(
          source,
          "ERR_DISPATCH_CONFIG_PATH",
          `${key}.module`,
          `"${key}.module" ${JSON.stringify(module)} ${path.reason}`,
          "Use a path inside the package, starting with ./",
        );
        continue;
      }
      if (backend === "*" && !path.path.includes("{backend}")) {
        this.problem(
          source,
          "ERR_DISPATCH_CONFIG_INVALID",
          `${key}.module`,
          `"backends.*" needs {backend} in its module path`,
          'Write "module": "./link/{backend}/dispatch/basic.js".',
        );
        continue;
      }
      const owner = (packageName as string | undefined) ?? source.packageName;
      const dir = packageName === undefined ? source.dir : source.lookup(packageName as string);
      const subpath = backend === "*" ? path.path : path.path.replaceAll("{backend}", backend);
      const rule: WatchRule = {
        declaredIn: source.file,
        packageName: owner,
        roots: dir === undefined ? [] : [pathToFileURL(dir).href.replace(/\/?$/, "/")],
        subpath,
        backend: backend === "*" ? undefined : backend,
        exportName: backend === "*" ? (exportName as string) : (exportName as string).replaceAll("{backend}", backend),
      };
      const clash = this.rules.find(
        (other) =>
          other.backend !== undefined &&
          other.backend === rule.backend &&
          (other.subpath !== rule.subpath || other.packageName !== rule.packageName),
      );
      if (clash !== undefined) {
        this.problem(
          source,
          "ERR_DISPATCH_CONFIG_DUPLICATE",
          key,
          `backend ${JSON.stringify(backend)} is declared twice with different modules: ${clash.packageName ?? "?"}/${clash.subpath} (in ${clash.declaredIn}) and ${owner ?? "?"}/${subpath}. Both are watched`,
          "Keep one declaration, or give the backends different names.",
        );
      }
      this.rules.push(rule);
    }
  }
}

function readJson(file: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(readFileSync(file, "utf8")) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** Finds `node_modules/<name>` from `start` upwards, as Node would. Reads nothing else. */
function findPackageDir(start: string, name: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The nearest directory at or above `start` that has a package.json. */
export function findAppRoot(start: string): string | undefined {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

export interface DiscoverOptions {
  /** The app's directory; its package.json and those of its direct dependencies are read. */
  readonly root?: string;
  /** A JSON file holding a `dispatchHook` field (DISPATCH_HOOK_CONFIG). */
  readonly configFile?: string | undefined;
  /** Declarations given in code; paths resolve against `dir` (default `root`). */
  readonly inline?: ReadonlyArray<{ readonly field: DispatchHookField; readonly dir?: string; readonly name?: string }>;
  /** Read package.json files (default true). */
  readonly packages?: boolean;
}

/**
 * Reads the configuration: the app's package.json, those of its direct dependencies (never the
 * rest of node_modules), the DISPATCH_HOOK_CONFIG file and declarations given in code. Problems
 * are collected, not thrown: a loader must never take down the app.
 */
export function discover(options: DiscoverOptions = {}): HookConfig {
  const collector = new Collector();
  const root = findAppRoot(options.root ?? process.cwd()) ?? resolve(options.root ?? process.cwd());
  const lookup = (name: string) => {
    const dir = findPackageDir(root, name);
    return dir === undefined ? undefined : realDir(dir);
  };
  const readPackage = (dir: string, fallbackName: string | undefined) => {
    const file = join(dir, "package.json");
    collector.files.push(file);
    const json = readJson(file);
    // Built only for a package with something to say: realpath is a system call, and most
    // dependencies declare nothing.
    const source = (name: string | undefined): Source => ({
      file,
      label: `package.json "dispatchHook" of ${name ?? dir.split(sep).pop() ?? dir}`,
      packageName: name,
      dir: realDir(dir),
      lookup,
    });
    if (!json.ok) {
      collector.problem(
        source(fallbackName),
        "ERR_DISPATCH_CONFIG_JSON",
        "",
        `package.json is not valid JSON: ${json.error}`,
        "Fix the JSON syntax; this package's declarations are ignored until then.",
      );
      return undefined;
    }
    if (!isRecord(json.value)) return undefined;
    const name = typeof json.value.name === "string" ? json.value.name : fallbackName;
    if (json.value.dispatchHook !== undefined) collector.field(source(name), json.value.dispatchHook);
    return json.value;
  };

  if (options.packages !== false && existsSync(join(root, "package.json"))) {
    const app = readPackage(root, undefined);
    if (app !== undefined) {
      const deps = new Set<string>();
      for (const key of ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"]) {
        const group = app[key];
        if (isRecord(group)) for (const name of Object.keys(group)) if (nameSegment.test(name)) deps.add(name);
      }
      for (const name of deps) {
        const dir = findPackageDir(root, name);
        if (dir !== undefined) readPackage(dir, name);
      }
    }
  }
  if (options.configFile !== undefined) {
    const file = resolve(root, options.configFile);
    collector.files.push(file);
    const source: Source = { file, label: "DISPATCH_HOOK_CONFIG", packageName: undefined, dir: realDir(dirname(file)), lookup };
    const json = readJson(file);
    if (json.ok) collector.field(source, json.value);
    else
      collector.problem(
        source,
        "ERR_DISPATCH_CONFIG_JSON",
        "",
        `the DISPATCH_HOOK_CONFIG file cannot be read as JSON: ${json.error}`,
        "Point DISPATCH_HOOK_CONFIG at a JSON file holding a dispatchHook field.",
      );
  }
  for (const { field, dir, name } of options.inline ?? []) {
    const label = name === undefined ? "install() options" : `install() options for ${name}`;
    const source: Source = { file: "install() options", label, packageName: name, dir: realDir(resolve(root, dir ?? ".")), lookup };
    collector.field(source, field);
  }
  return { rules: collector.rules, plugins: collector.plugins, problems: collector.problems, files: collector.files };
}
