import type { PluginDeclaration, WatchRule } from "./declarations.js";

/** A plugin's registration module for one backend. */
export interface PlannedRegistration {
  readonly plugin: string;
  /** File URL of the registration module. */
  readonly url: string;
}

/** What to do with one watched module instance. Plain data: it is the input of the transforms. */
export interface ModulePlan {
  readonly backend: string;
  readonly exportName: string;
  /** The registration modules to load right after this backend's module, in declaration order. */
  readonly registrations: readonly PlannedRegistration[];
}

interface CompiledRule {
  readonly rule: WatchRule;
  readonly pattern: RegExp;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** A subpath as it appears in a URL, `{backend}` kept. */
function encode(subpath: string): string {
  return subpath
    .split("/")
    .map((segment) => encodeURIComponent(segment).replaceAll("%7Bbackend%7D", "{backend}"))
    .join("/");
}

/** The subpath as a pattern: `{backend}` captures one path segment. */
function subpathPattern(subpath: string): string {
  return escapeRegExp(encode(subpath)).replaceAll("\\{backend\\}", "([^/?#]+)");
}

/** The longest literal run of a subpath (as it appears in a URL), around any `{backend}`. */
function needle(subpath: string): string {
  const longest = encode(subpath)
    .split("{backend}")
    .reduce((a, b) => (b.length > a.length ? b : a), "");
  // Without its slashes at the ends: a substring search looks for the needle's first character
  // first, and every URL is full of slashes.
  return longest.replace(/^\/+|\/+$/g, "");
}

/**
 * Maps a module URL to its plan, or to undefined. Almost every module a process loads is not
 * watched, so that answer costs one test of one precompiled expression: no file-system access and
 * no allocation.
 */
export class Matcher {
  readonly #any: RegExp;
  /** A literal piece of every rule's path: a plain substring search rules out almost every URL before any regex runs. */
  readonly #needles: readonly string[];
  readonly #rules: readonly CompiledRule[];
  readonly #registrations: ReadonlyMap<string, readonly PlannedRegistration[]>;
  readonly #registrationUrls: ReadonlySet<string>;

  constructor(rules: readonly WatchRule[], plugins: readonly PluginDeclaration[] = []) {
    // A backend declared by name wins over a pattern that also matches its module, in either order.
    const named = (rule: WatchRule) => (rule.backend === undefined ? 1 : 0);
    this.#rules = [...rules]
      .sort((a, b) => named(a) - named(b))
      .map((rule) => {
        const tail = `${subpathPattern(rule.subpath)}(?:[?#]|$)`;
        const places = rule.roots.map((root) => `^${escapeRegExp(root)}`);
        // Every copy of the package, wherever it is installed: nested, hoisted or in a store.
        if (rule.packageName !== undefined) places.push(`/node_modules/${escapeRegExp(rule.packageName)}/`);
        const source = places.length === 0 ? "(?!)" : `(?:${places.join("|")})${tail}`;
        return { rule, pattern: new RegExp(source) };
      });
    this.#any = new RegExp(this.#rules.map((r) => `(?:${r.pattern.source})`).join("|") || "(?!)");
    this.#needles = [...new Set(rules.map((rule) => needle(rule.subpath)))];
    const registrations = new Map<string, PlannedRegistration[]>();
    for (const plugin of plugins) {
      for (const [backend, url] of Object.entries(plugin.registrations)) {
        const list = registrations.get(backend) ?? [];
        if (!list.some((r) => r.url === url)) list.push({ plugin: plugin.name, url });
        registrations.set(backend, list);
      }
    }
    this.#registrations = registrations;
    this.#registrationUrls = new Set([...registrations.values()].flatMap((list) => list.map((r) => r.url)));
  }

  /** Whether `url` is a plugin's registration module. */
  registers(url: string): boolean {
    return this.#registrationUrls.has(url);
  }

  /** Whether any rule could match; cheap enough for every module load. */
  watches(url: string): boolean {
    // An indexed loop: this runs for every module, mostly still in the interpreter at start-up.
    const needles = this.#needles;
    for (let i = 0; i < needles.length; i++) if (url.includes(needles[i] as string)) return this.#any.test(url);
    return false;
  }

  /** Where `parent` is a plugin's registration module: per backend, that its import of `specifier` does not resolve (`error`). */
  unresolved(specifier: string, parent: string | undefined, error: unknown): Array<{ backend: string; message: string }> {
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return [...this.#registrations].flatMap(([backend, list]) =>
      list.flatMap(({ plugin, url }) =>
        url === parent
          ? [
              {
                backend,
                message: `${plugin}'s registration module for ${backend} (${url}) imports ${JSON.stringify(specifier)}, which does not resolve (${why})`,
              },
            ]
          : [],
      ),
    );
  }

  match(url: string): ModulePlan | undefined {
    if (!this.watches(url)) return undefined;
    for (const { rule, pattern } of this.#rules) {
      const found = pattern.exec(url);
      if (found === null) continue;
      let backend = rule.backend;
      if (backend === undefined) {
        try {
          backend = decodeURIComponent(found[1] as string);
        } catch {
          continue;
        }
      }
      return {
        backend,
        exportName: rule.exportName.replaceAll("{backend}", backend),
        registrations: this.#registrations.get(backend) ?? [],
      };
    }
    return undefined;
  }
}
