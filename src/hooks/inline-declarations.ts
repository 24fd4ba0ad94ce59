/**
 * Declarations given in code (to install() or to a host adapter) instead of in package.json: the
 * backends, and the plugins with their registration modules and expectations, as the inline fields
 * discovery reads alongside package.json files.
 */
import { checkOptions } from "../registry/options.js";
import type { BackendDeclaration, DispatchHookField } from "./config-field.js";

export interface PluginOptions {
  readonly name?: string;
  /** The plugin's directory; its registration paths resolve against it (default: root). */
  readonly root?: string;
  readonly registrations?: Readonly<Record<string, string>>;
  readonly expects?: Readonly<Record<string, readonly string[]>>;
}

export interface InlineDeclarations {
  /** Backends declared in code, as in package.json `dispatchHook.backends`. */
  readonly backends?: Readonly<Record<string, BackendDeclaration>>;
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
