/**
 * What a `dispatchHook` field declares, once read and checked (config-field.ts reads it): backends,
 * plugins with their registration modules and expectations, the watch rules built from them, the
 * problems found, and where each field came from. Also the same declarations given in code (to
 * install() or to a host adapter), turned into the inline fields discovery reads.
 */
import type { ConfigErrorCode } from "../registry/errors.js";
import { checkOptions } from "../registry/options.js";

/** Where one backend's dispatch module and table are, as written in `dispatchHook.backends` (a framework's; a backend set's backends are `BackendDeclaration`s of dispatch-hook). */
export interface DispatchModuleDeclaration {
  /** Package-relative path of the dispatch module; may contain `{backend}`. */
  readonly module: string;
  /** The export that holds the table; may contain `{backend}`. */
  readonly export: string;
  /** Whose files `module` names, when it is another package than the declaring one. */
  readonly package?: string;
}

export interface DispatchHookField {
  /** Backend name → declaration. The key "*" with `{backend}` in `module` matches any backend. */
  readonly backends?: Readonly<Record<string, DispatchModuleDeclaration>>;
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
  readonly code: ConfigErrorCode;
  /** What it names was read all the same (a wrapped file, a backend declared twice): a warning, not a problem of the audit. */
  readonly readAnyway?: true;
  readonly file: string;
  readonly key: string;
  readonly message: string;
  readonly fix: string;
}

/** Where one field came from, and how to resolve what it names. */
export interface FieldSource {
  /** The package.json (or config file) path. */
  readonly file: string;
  /** How the file is named in messages: `package.json "dispatchHook" of ml-ops`. */
  readonly label: string;
  readonly packageName: string | undefined;
  /** The directory paths resolve against, as the real path. */
  readonly dir: string;
  /** Where a package named with `package` is looked up from (default: dir). */
  readonly from?: string;
}

/**
 * A backend for a framework's dispatchable functions, declared in a package.json:
 * `"dispatchables": { "<framework's set>": { "<backend>": { primaryTypes, implementations, … } } }`.
 * Checked here only as far as its shape; the set that reads it checks the rest.
 */
export interface DispatchableDeclaration {
  readonly set: string;
  readonly backend: string;
  readonly declaration: Readonly<Record<string, unknown>>;
  /** The package directory its paths resolve against. */
  readonly dir: string;
  readonly declaredIn: string;
}

export interface PluginOptions {
  readonly name?: string;
  /** The plugin's directory; its registration paths resolve against it (default: root). */
  readonly root?: string;
  readonly registrations?: Readonly<Record<string, string>>;
  readonly expects?: Readonly<Record<string, readonly string[]>>;
}

export interface InlineDeclarations {
  /** Backends declared in code, as in package.json `dispatchHook.backends`. */
  readonly backends?: Readonly<Record<string, DispatchModuleDeclaration>>;
  /** Plugins declared in code. */
  readonly plugins?: readonly PluginOptions[];
}

const pluginKeys = { name: "string", root: "string", registrations: "object", expects: "object" } as const;

/** The inline fields for Discovery; `where` names the caller in a refusal ("install()"). */
export function inlineFields(options: InlineDeclarations, where: string): Array<{ field: DispatchHookField; dir?: string; name?: string }> {
  const inline: Array<{ field: DispatchHookField; dir?: string; name?: string }> = [];
  if (options.backends !== undefined) inline.push({ field: { backends: options.backends } });
  (options.plugins ?? []).forEach((plugin, i) => {
    checkOptions(plugin, pluginKeys, `${where}: plugins[${i}]`);
    const field: DispatchHookField = {
      ...(plugin.registrations === undefined ? {} : { registrations: plugin.registrations }),
      ...(plugin.expects === undefined ? {} : { expects: plugin.expects }),
    };
    inline.push({
      field,
      ...(plugin.root === undefined ? {} : { dir: plugin.root }),
      ...(plugin.name === undefined ? {} : { name: plugin.name }),
    });
  });
  return inline;
}
