/**
 * Runs one of dispatch-hook's own scripts with a V8 code cache, so that the loader does not parse
 * and compile the same code again at the start of every process.
 *
 * Why: most of what the loader adds to a process's start-up is V8 parsing and compiling
 * dispatch-hook's code, which runs once per process (see notes/node-versions.md). Node's compile
 * cache (`module.enableCompileCache()`) cannot be limited to one package: it would cache the whole
 * app, a process-wide change the loader must not make. A `vm.Script` with `cachedData` is limited
 * to the one script.
 *
 * Where: `node_modules/.cache/dispatch-hook/`, the conventional place for a package's caches, in the
 * outermost node_modules that holds this copy of dispatch-hook (a linked checkout uses its own
 * node_modules). The files there are code, with the same trust as the package beside them.
 * `DISPATCH_HOOK_CODE_CACHE=0` (or false, off, no) turns the cache off; 1 (true, on, yes) keeps the
 * default; any other value is the directory to use.
 *
 * What a cache file's name carries: what V8's own check does not cover. V8 rejects a cache made by
 * another V8 or with other flags, but of the source it checks only the length, so the name carries
 * the script's size, modification time and inode (an edited script never meets an old cache), Node's
 * version and architecture, and the process's flags (processes started with different V8 flags do
 * not keep replacing each other's file). A new cache replaces the caches of the same script with
 * other contents (an update, a rebuild), so the directory holds one file per script and per kind of
 * process.
 *
 * When: a process that found no usable cache writes one once, when its caller calls save(). The
 * loader does so when the in-thread hooks first go idle (every generated module handed out so far
 * has loaded, so the functions that build and serve a dispatch module have been compiled), or right
 * after install() on the hooks thread's API. Not at exit: that would take a listener on process,
 * which a test harness can see, and only in the runs that write. A process that never loads a
 * dispatch module writes nothing, and the next one tries again.
 *
 * Failure: writing goes through a temporary file and a rename, so concurrent processes never read
 * half a file. Nothing here ever throws for the cache's sake: a cache that cannot be read, is
 * rejected by V8, or cannot be written only costs the time it would have saved.
 */
import { fs, path, url } from "../builtins.js";
import { writeFileAtomically } from "./atomic-write.js";

/** What happened to the cache: used, missing or rejected (so written by save()), or turned off. */
export type CacheState = "used" | "rejected" | "missing" | "off";

export interface CachedScript {
  /** The script's completion value. */
  readonly value: unknown;
  readonly state: CacheState;
  /** The cache file read (and written by save() unless used); undefined when off. */
  readonly file: string | undefined;
  /**
   * Writes the cache if this process found none it could use, with every function compiled so far;
   * once. A no-op when the cache was used or is off.
   */
  save(): void;
}

/** 32-bit FNV-1a, as 8 hex digits: a file name, not a security boundary. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * The cache directory for a package installed at `packageDir`: `.cache/dispatch-hook` in the
 * outermost node_modules on its path, else in its own node_modules (a linked checkout).
 */
export function cacheDirFor(packageDir: string): string {
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = `${packageDir}${path.sep}`.indexOf(marker);
  const modules = at < 0 ? path.join(packageDir, "node_modules") : packageDir.slice(0, at + marker.length - 1);
  return path.join(modules, ".cache", "dispatch-hook");
}

/**
 * The directory to use: off, the default (unset, empty, or a word that means on, so that `=1` never
 * makes a directory named "1"), or the one `DISPATCH_HOOK_CODE_CACHE` names.
 */
export function chooseCacheDir(setting: string | undefined, packageDir: string): string | undefined {
  const word = setting?.toLowerCase();
  if (word === "0" || word === "false" || word === "off" || word === "no") return undefined;
  if (word === undefined || word === "" || word === "1" || word === "true" || word === "on" || word === "yes")
    return cacheDirFor(packageDir);
  return path.resolve(setting as string);
}

/**
 * The cache file's name for this script in this process: everything V8 does not check itself, in
 * three parts: which file, which contents of it (size, modification time, inode), and which process
 * (Node's version and architecture, its flags). A new cache replaces those of the same file with
 * other contents; those of other processes stay (a project may run several Node versions in turn).
 */
export function cacheName(file: string, stat: { size: number; mtimeMs: number; ino: number }): string {
  const flags = `${process.execArgv.join(" ")}\n${process.env.NODE_OPTIONS ?? ""}`;
  const contents = hash(`${stat.size}\n${stat.mtimeMs}\n${stat.ino}`);
  return `${stalePrefix(file)}${contents}-${hash(`${process.version}\n${process.arch}\n${flags}`)}.v8cache`;
}

/** What the names of every cache of `file` start with, whatever its contents. */
function stalePrefix(file: string): string {
  return `${path.basename(file).replace(/\.[^.]*$/, "")}-${hash(file)}-`;
}

/** Removes the caches of `file` made for other contents of it than `target`'s. */
function pruneStale(file: string, target: string): void {
  const dir = path.dirname(target);
  const prefix = stalePrefix(file);
  const name = path.basename(target);
  // The same file and contents: everything before the last part, which names the kind of process.
  const current = name.slice(0, name.lastIndexOf("-") + 1);
  for (const other of fs.readdirSync(dir)) {
    if (!other.startsWith(prefix) || other.startsWith(current) || !other.endsWith(".v8cache")) continue;
    // unlinkSync, not rmSync: rmSync loads Node's rimraf module. Another process may prune it first.
    try {
      fs.unlinkSync(path.join(dir, other));
    } catch {
      // Already gone.
    }
  }
}

/** Whether the file was written (a read-only, full or forbidden directory only means no cache). */
function write(target: string, data: Buffer): boolean {
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    writeFileAtomically(target, data);
    return true;
  } catch {
    return false;
  }
}

/**
 * Compiles `file` (a script whose completion value is what the caller wants, here a function
 * expression) with the cache in `dir`, runs it in this context, and returns its value.
 */
export function runCached(file: string, dir: string | undefined): CachedScript {
  const vm = process.getBuiltinModule("node:vm");
  const source = fs.readFileSync(file, "utf8");
  let target: string | undefined;
  let cachedData: Buffer | undefined;
  if (dir !== undefined) {
    try {
      target = path.join(dir, cacheName(file, fs.statSync(file)));
      cachedData = fs.readFileSync(target);
    } catch {
      cachedData = undefined;
    }
  }
  const script = new vm.Script(source, {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData }),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const value: unknown = script.runInThisContext();
  const state: CacheState =
    target === undefined ? "off" : cachedData === undefined ? "missing" : script.cachedDataRejected ? "rejected" : "used";
  let owed = target !== undefined && state !== "used";
  const save = (): void => {
    if (!owed || target === undefined) return;
    owed = false;
    try {
      if (write(target, script.createCachedData())) pruneStale(file, target);
    } catch {
      // createCachedData() or the directory listing failed: nothing more to do.
    }
  };
  return { value, state, file: target, save };
}

/** The directory of the package holding `moduleUrl` (a file in dist/bundle/ or dist/hooks/). */
export function packageDirOf(moduleUrl: string): string {
  return path.resolve(path.dirname(url.fileURLToPath(moduleUrl)), "..", "..");
}
