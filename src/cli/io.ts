/** Command-line plumbing: where a command writes (so tests can run commands in-process), its colours, its options. */
import { didYouMean } from "../registry/options.js";

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly cwd: string;
  readonly env: Record<string, string | undefined>;
  readonly isTTY: boolean;
}

export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
  };
}

/** Colour for people at a terminal, plain text everywhere else (CI logs, pipes, NO_COLOR, TERM=dumb). */
export function createStyle(stream: { isTTY?: boolean }, env: Record<string, string | undefined>) {
  const on = stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "") && env.TERM !== "dumb";
  const wrap = (open: number, close: number) => (text: string) => (on ? `\x1b[${open}m${text}\x1b[${close}m` : text);
  return { bold: wrap(1, 22), red: wrap(31, 39), green: wrap(32, 39), dim: wrap(2, 22) };
}

type Flags = Record<string, boolean | string | undefined>;

/**
 * A subcommand's options: `--flag`, `--name value` and `--name=value`, up to "--" or the first word
 * that is not an option; what follows is the command's (or the subcommand's positional words).
 */
export function parseFlags(
  args: readonly string[],
  kinds: Readonly<Record<string, "boolean" | "string">>,
): { flags: Flags; rest: string[] } | { error: string } {
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
