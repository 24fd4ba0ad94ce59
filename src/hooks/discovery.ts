/**
 * Finding the declarations without scanning node_modules, so the cost follows what the program
 * loads: the app's package (appRoot) and its direct dependencies; each package scope as the hooks
 * first resolve one of its modules, and its direct dependencies when it depends on a framework or on
 * dispatch-hook (so a plugin beside its framework is found before its backend loads); and
 * DISPATCH_HOOK_CONFIG and declarations given in code. All feed one FieldReader.
 */
import { fs, path, url } from "../builtins.js";
import { FieldReader } from "./config-field.js";
import type {
  ConfigProblem,
  DispatchableDeclaration,
  DispatchHookField,
  FieldSource,
  PluginDeclaration,
  WatchRule,
} from "./declarations.js";
import {
  dependencyNames,
  findPackage,
  findPackageRoot,
  isPackageName,
  moduleFormat,
  type PackageJson,
  readJson,
  realDir,
} from "./package-scope.js";

export type { ConfigProblem, DispatchHookField, DispatchModuleDeclaration, PluginDeclaration, WatchRule } from "./declarations.js";

export interface HookConfig {
  readonly rules: readonly WatchRule[];
  readonly plugins: readonly PluginDeclaration[];
  /** Backends for dispatchable functions (see dispatchable/backend-set.ts). */
  readonly dispatchables: readonly DispatchableDeclaration[];
  readonly problems: readonly ConfigProblem[];
  /** Every package.json (or config file) that was read. */
  readonly files: readonly string[];
  /** Where discovery started. */
  readonly root: string;
}

export interface DiscoverOptions {
  /** The app's directory. Default: the package of the entry point, else the working directory. */
  readonly root?: string;
  /** The program's entry point (default process.argv[1]); its package is the app's. */
  readonly entry?: string | undefined;
  /** A JSON file holding a `dispatchHook` field (DISPATCH_HOOK_CONFIG). */
  readonly configFile?: string | undefined;
  /** Declarations given in code; paths resolve against `dir` (default `root`). */
  readonly inline?: ReadonlyArray<{ readonly field: DispatchHookField; readonly dir?: string; readonly name?: string }>;
  /** Where inline declarations come from, in messages (default "install() options"). */
  readonly inlineSource?: string;
  /** Read package.json files (default true). */
  readonly packages?: boolean;
  /** Follow the whole dependency tree from the root, eagerly (for `dispatch-hook doctor`). */
  readonly transitive?: boolean;
}

interface Known {
  readonly dir: string;
  readonly name: string | undefined;
  readonly deps: readonly string[];
  depsRead: boolean;
}

const tool = /[\\/]node_modules[\\/]/;

/** A config with nothing in it: before one has been read, or when none could be. */
export function emptyConfig(): HookConfig {
  return { rules: [], plugins: [], dispatchables: [], problems: [], files: [], root: "" };
}

/** Where discovery starts: the package of the entry point (unless a tool's), else the working directory's. */
export function appRoot(options: { readonly root?: string | undefined; readonly entry?: string | undefined }): string {
  if (options.root !== undefined) return findPackageRoot(options.root) ?? path.resolve(options.root);
  const entry = options.entry;
  if (entry === undefined || entry === "" || !path.isAbsolute(entry)) return findPackageRoot(process.cwd()) ?? process.cwd();
  const real = realDir(entry);
  const entryRoot = findPackageRoot(path.dirname(real));
  // An entry point inside node_modules is a tool's (vitest, jest, mocha, tsx): the app is the one it
  // was started for, in the working directory. The tool's package is the answer only if there is none.
  if (tool.test(real) || tool.test(entry)) return findPackageRoot(process.cwd()) ?? entryRoot ?? process.cwd();
  return entryRoot ?? findPackageRoot(process.cwd()) ?? process.cwd();
}

export class Discovery {
  readonly root: string;
  readonly #reader = new FieldReader();
  readonly #files: string[] = [];
  readonly #packages: boolean;
  /** Directory (as a URL prefix) -> its package directory, or null outside any package. */
  readonly #scopes = new Map<string, string | null>();
  /** Package directory -> what was read there. */
  readonly #known = new Map<string, Known>();
  readonly #declared = new Set<string>(); // real directories of the packages whose field was read
  /** Directory (as a URL prefix) -> the "type" of its nearest package.json. */
  readonly #types = new Map<string, "module" | "commonjs">();
  /** Names of packages that declare backends, and dispatch-hook itself. */
  readonly #frameworks = new Set<string>(["dispatch-hook"]);
  #version = 0;

  constructor(options: DiscoverOptions = {}) {
    this.root = appRoot({ root: options.root, entry: options.entry ?? process.argv[1] });
    this.#packages = options.packages !== false;
    const app = this.#packages && fs.existsSync(path.join(this.root, "package.json")) ? this.#read(this.root, true) : undefined;
    if (app !== undefined) this.#readDeps(app);
    if (options.transitive === true) this.#walk();
    if (options.configFile !== undefined) this.#configFile(options.configFile);
    const inlineSource = options.inlineSource ?? "install() options";
    for (const { field, dir, name } of options.inline ?? []) {
      const label = name === undefined ? inlineSource : `${inlineSource} for ${name}`;
      this.#reader.field(
        {
          file: label,
          label,
          packageName: name,
          dir: realDir(path.resolve(this.root, dir ?? ".")),
          from: this.root,
        },
        field,
      );
      this.#version++;
    }
  }

  /** Changes whenever a rule or a plugin is added. */
  get version(): number {
    return this.#version;
  }

  config(): HookConfig {
    return {
      rules: this.#reader.rules,
      plugins: this.#reader.plugins,
      dispatchables: this.#reader.dispatchables,
      problems: this.#reader.problems,
      files: this.#files,
      root: this.root,
    };
  }

  /** Learns the package scope of a module about to load (a file: URL); whether new declarations appeared. */
  learn(href: string): boolean {
    if (!this.#packages || !href.startsWith("file:")) return false;
    // This runs for every module the program resolves: a slice and a map lookup when the directory
    // is known (measured faster than comparing against recent directories).
    const query = href.indexOf("?");
    const hash = href.indexOf("#");
    const cut = query < 0 ? hash : hash < 0 ? query : Math.min(query, hash);
    const dirUrl = href.slice(0, href.lastIndexOf("/", cut < 0 ? href.length : cut) + 1);
    if (this.#scopes.get(dirUrl) !== undefined) return false;
    const before = this.version;
    let pkg: string | null = null;
    try {
      pkg = this.#scopeOf(url.fileURLToPath(dirUrl)) ?? null;
    } catch {}
    this.#scopes.set(dirUrl, pkg);
    if (pkg !== null && !this.#known.has(pkg)) this.#read(pkg, false);
    return this.version !== before;
  }

  /** How a module loads, as Node decides, for when its hooks do not say (package-scope.ts). */
  formatOf(href: string): "module" | "commonjs" | undefined {
    return moduleFormat(href, this.#types);
  }

  /** The package directory of a directory: the nearest package.json that names a package or declares something. */
  #scopeOf(dir: string): string | undefined {
    for (let current = dir; ; current = path.dirname(current)) {
      const root = findPackageRoot(current);
      if (root === undefined) return undefined;
      if (this.#known.has(root)) return root;
      const json = readJson(path.join(root, "package.json"));
      if (!json.ok) return root;
      const value = json.value as PackageJson;
      if (
        typeof value === "object" &&
        value !== null &&
        (value.name !== undefined || value.dispatchHook !== undefined || value.dependencies !== undefined)
      )
        return root;
      if (path.dirname(root) === root) return undefined;
      current = root;
    }
  }

  /** Reads one package.json (or takes it already read); remembers the package and feeds its dispatchHook field, if any. */
  #read(dir: string, isApp: boolean, read?: ReturnType<typeof readJson>): Known | undefined {
    const existing = this.#known.get(dir);
    if (existing !== undefined) return existing;
    const file = path.join(dir, "package.json");
    this.#files.push(file);
    const json = read ?? readJson(file);
    const fallback = isApp ? undefined : dir.split(path.sep).pop();
    // Built only for a package with something to say: realpath is a system call.
    const source = (name: string | undefined, real = realDir(dir)): FieldSource => ({
      file,
      label: `package.json "dispatchHook" of ${name ?? dir.split(path.sep).pop() ?? dir}`,
      packageName: name,
      dir: real, // packages it names are looked up from where it really is, as Node resolves (pnpm's siblings)
    });
    if (!json.ok) {
      this.#reader.problem(
        source(fallback),
        "",
        `package.json is not valid JSON: ${json.error}`,
        "Fix the JSON syntax; this package's declarations are ignored until then.",
        "ERR_DISPATCH_CONFIG_JSON",
      );
      return undefined;
    }
    if (typeof json.value !== "object" || json.value === null) return undefined;
    const value = json.value as PackageJson;
    const name = typeof value.name === "string" ? value.name : fallback;
    const known: Known = { dir, name, deps: dependencyNames(value, isApp).filter(isPackageName), depsRead: false };
    this.#known.set(dir, known);
    // A linked package is met at its link and at its real directory: its field is read once.
    const real = value.dispatchHook === undefined ? undefined : realDir(dir);
    if (real !== undefined && !this.#declared.has(real)) {
      this.#declared.add(real);
      const rulesBefore = this.#reader.rules.length;
      this.#reader.field(source(name, real), value.dispatchHook);
      if (this.#reader.rules.length > rulesBefore && name !== undefined && !this.#frameworks.has(name)) {
        this.#frameworks.add(name);
        // A framework just appeared: the packages that depend on it may have plugins beside it.
        for (const other of this.#known.values()) if (other.deps.includes(name)) this.#readDeps(other);
      }
      this.#version++;
    }
    // A package that depends on a framework may have plugins beside it: read its dependencies.
    if (known.deps.some((dep) => this.#frameworks.has(dep))) this.#readDeps(known);
    return known;
  }

  #readDeps(known: Known): void {
    if (known.depsRead) return;
    known.depsRead = true;
    for (const name of known.deps) {
      const found = findPackage(known.dir, name);
      if (found !== undefined) this.#read(found.dir, false, found.json);
    }
  }

  /** The whole dependency tree, breadth first (doctor only: it reads every package.json in it). */
  #walk(): void {
    for (let changed = true; changed; ) {
      changed = false;
      for (const known of [...this.#known.values()]) {
        if (known.depsRead) continue;
        this.#readDeps(known);
        changed = true;
      }
    }
  }

  #configFile(configFile: string): void {
    const file = path.resolve(this.root, configFile);
    this.#files.push(file);
    const source: FieldSource = {
      file,
      label: "DISPATCH_HOOK_CONFIG",
      packageName: undefined,
      dir: realDir(path.dirname(file)),
      from: this.root,
    };
    const json = readJson(file);
    if (json.ok) this.#reader.fileField(source, json.value);
    else
      this.#reader.problem(
        source,
        "",
        `the DISPATCH_HOOK_CONFIG file cannot be read as JSON: ${json.error}`,
        'Point DISPATCH_HOOK_CONFIG at a JSON file holding what a dispatchHook field would, such as { "expects": { "cpu": ["Conv"] } }.',
        "ERR_DISPATCH_CONFIG_JSON",
      );
    this.#version++;
  }
}

/** Reads the configuration once (see Discovery). Problems are collected, not thrown. */
export function discover(options: DiscoverOptions = {}): HookConfig {
  return new Discovery(options).config();
}
