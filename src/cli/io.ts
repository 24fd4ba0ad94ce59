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
 * that is not an option; what follows is the command's (or the subcommand's positional words). Or the
 * exit code the subcommand ends with at once: 0 after its help (--help, -h), 2 after a usage error.
 */
export function parseCommand(
  args: readonly string[],
  io: Io,
  command: string,
  help: string,
  kinds: Readonly<Record<string, "boolean" | "string">>,
): { flags: Flags; rest: string[]; usage: (message: string) => number } | number {
  const usage = (message: string) => {
    io.err(`dispatch-hook ${command}: ${message}\n\n${help}`);
    return 2;
  };
  const flags: Flags = {};
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") {
      i++;
      break;
    }
    if (!arg.startsWith("-")) break;
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const kind = kinds[name];
    if (kind === undefined) return usage(`unknown option ${name}${didYouMean(name, Object.keys(kinds))}`);
    if (kind === "boolean") {
      if (eq !== -1) return usage(`${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "" || (eq === -1 && value.startsWith("-"))) return usage(`${name} needs a value`);
    flags[name] = value;
  }
  if (flags["--help"] || flags["-h"]) {
    io.out(help);
    return 0;
  }
  return { flags, rest: args.slice(i), usage };
}
