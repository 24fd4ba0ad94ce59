/**
 * The named types of the backend sets declared in package.json files (`"specifier#Export"` in
 * `primaryTypes` and `secondaryTypes`). A backend set never imports them to dispatch, so a typo in
 * one is silent at run time: no value is ever of that type, and calls go to another backend or the
 * default. doctor checks that each specifier resolves as the set resolves it (named-type.ts); the
 * child of doctor --load also loads the module and checks the export, as the set would see it.
 */
import { fs, nodeModule, path, url } from "../builtins.js";
import { NamedTypeResolver, parseNamedType } from "../dispatchable/named-type.js";
import { builtinTypes } from "../dispatchable/type-match.js";
import type { HookConfig } from "../hooks/discovery.js";
import type { ErrorCode } from "../registry/errors.js";

export interface NamedTypeEntry {
  readonly set: string;
  readonly backend: string;
  readonly key: "primaryTypes" | "secondaryTypes";
  readonly label: string;
  /** The declaring package's directory, which the set resolves relative specifiers against. */
  readonly base: string;
  readonly declaredIn: string;
  /** The file the specifier names, once it resolves. */
  readonly file?: string;
}

export interface TypeFinding {
  readonly kind: "type";
  readonly backend: string;
  readonly code: ErrorCode;
  readonly message: string;
  readonly fix: string;
}

const notFound: ErrorCode = "ERR_DISPATCH_TYPE_NOT_FOUND";

/** Every type name the sets' package.json declarations give. */
function entries(config: HookConfig): NamedTypeEntry[] {
  return config.dispatchables.flatMap((d) =>
    (["primaryTypes", "secondaryTypes"] as const).flatMap((key) => {
      const list = (d.declaration as Record<string, unknown>)[key];
      if (!Array.isArray(list)) return [];
      return list.flatMap((label) =>
        typeof label === "string" ? [{ set: d.set, backend: d.backend, key, label, base: d.dir, declaredIn: d.declaredIn }] : [],
      );
    }),
  );
}

/**
 * The file a named type names, as the set finds it: a class's module by its exact path (relative
 * to the package) or by require.resolve() (a package); an abstract type's with require.resolve(),
 * which it loads with.
 */
function fileOf(specifier: string, base: string, abstract: boolean): string | undefined {
  const require = nodeModule.createRequire(path.join(base, "noop.js"));
  try {
    if (abstract) return require.resolve(specifier.startsWith(".") ? path.resolve(base, specifier) : specifier);
    const file = specifier.startsWith(".") ? path.resolve(base, specifier) : require.resolve(specifier);
    return fs.statSync(file, { throwIfNoEntry: false })?.isFile() === true ? file : undefined;
  } catch {
    return undefined;
  }
}

function finding(entry: NamedTypeEntry, code: ErrorCode, why: string): TypeFinding {
  return {
    kind: "type",
    backend: `${entry.backend} [${entry.set}]`,
    code,
    message: `backend ${entry.backend} of ${entry.set}: the type ${JSON.stringify(entry.label)} in ${entry.key}${why}`,
    fix: `Correct "dispatchables.${entry.set}.${entry.backend}.${entry.key}" in ${entry.declaredIn}: name the module that defines the class, and its export.`,
  };
}

/** What reading the configuration finds: type names that are malformed or name no module; and those that resolve, for doctor --load. */
export function checkNamedTypes(config: HookConfig): { findings: TypeFinding[]; resolved: NamedTypeEntry[] } {
  const findings: TypeFinding[] = [];
  const resolved: NamedTypeEntry[] = [];
  for (const entry of entries(config)) {
    if (Object.hasOwn(builtinTypes, entry.label)) continue;
    const named = parseNamedType(entry.label);
    if (named === undefined) {
      findings.push(
        finding(
          entry,
          "ERR_DISPATCH_BACKEND_DECLARATION",
          ' is not a type name ("specifier#Export", or a built-in type\'s name such as "Number"): the set leaves the backend out, with a warning',
        ),
      );
      continue;
    }
    const abstract = named.mode === "abstract";
    const file = fileOf(named.specifier, entry.base, abstract);
    if (file !== undefined) {
      resolved.push({ ...entry, file });
      continue;
    }
    const where = named.specifier.startsWith(".") ? path.resolve(entry.base, named.specifier) : named.specifier;
    const why = named.specifier.startsWith(".") && !abstract ? "does not exist" : `does not resolve from ${entry.base}`;
    const then = abstract
      ? "the first value that needs it fails the call (ERR_DISPATCH_TYPE_LOAD)"
      : "no value is ever of that type, so the backend never takes a call by it";
    findings.push(finding(entry, abstract ? "ERR_DISPATCH_TYPE_LOAD" : notFound, ` names ${where}, which ${why}: ${then}`));
  }
  return { findings, resolved };
}

/** In doctor --load's child: whether a resolved type's export is one a value can be of, as the set asks. */
export async function loadNamedType(entry: NamedTypeEntry): Promise<TypeFinding | undefined> {
  const named = parseNamedType(entry.label);
  if (named === undefined || entry.file === undefined) return undefined;
  const resolver = new NamedTypeResolver(entry.base);
  const where = `Backend ${JSON.stringify(entry.backend)} of ${entry.set}`;
  if (named.mode === "abstract") {
    try {
      resolver.load(named, where);
      return undefined;
    } catch (error) {
      return finding(entry, "ERR_DISPATCH_TYPE_LOAD", `: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  let exports: Record<string, unknown>;
  try {
    exports = (await import(url.pathToFileURL(entry.file).href)) as Record<string, unknown>;
  } catch (error) {
    return finding(entry, notFound, `: its module ${entry.file} fails to load: ${error instanceof Error ? error.message : String(error)}`);
  }
  const exported = exports[named.exportName];
  if (exported === undefined) {
    return finding(
      entry,
      notFound,
      `: its module has no export ${JSON.stringify(named.exportName)} (${entry.file}), so no value is ever of that type`,
    );
  }
  if (typeof exported !== "function") return finding(entry, notFound, `: its export ${JSON.stringify(named.exportName)} is not a class`);
  if (exported.name !== named.exportName) {
    const why = `: its export ${JSON.stringify(named.exportName)} is a class named ${JSON.stringify(exported.name)}, and a named type is matched by the class's own name, so no value is ever of this one`;
    const fix = `Name the class as it is exported (class ${named.exportName} { … }), or export it under its own name and name that in ${entry.declaredIn}.`;
    return { ...finding(entry, notFound, why), fix };
  }
  if (!resolver.is(named, exported)) {
    return finding(
      entry,
      notFound,
      `: its module re-exports ${named.exportName} from another file (${entry.file}); a named type is matched in the module that defines the class, so no value is ever of this one`,
    );
  }
  return undefined;
}
