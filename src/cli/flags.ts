import { didYouMean } from "../registry/options.js";

/**
 * A subcommand's options: `--flag`, `--name value` and `--name=value`, up to "--" or the first word
 * that is not an option; what follows is the command's (or the subcommand's positional words).
 */
export type FlagKinds = Readonly<Record<string, "boolean" | "string">>;
export type Flags = Record<string, boolean | string | undefined>;

export function parseFlags(args: readonly string[], kinds: FlagKinds): { flags: Flags; rest: string[] } | { error: string } {
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") return { flags, rest: args.slice(i + 1) };
    if (!arg.startsWith("-")) return { flags, rest: args.slice(i) };
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const kind = kinds[name];
    if (kind === undefined) return { error: `unknown option ${name}${didYouMean(name, Object.keys(kinds))}` };
    if (kind === "boolean") {
      if (eq !== -1) return { error: `${name} takes no value` };
      flags[name] = true;
      continue;
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "" || (eq === -1 && value.startsWith("-"))) return { error: `${name} needs a value` };
    flags[name] = value;
  }
  return { flags, rest: [] };
}
