/**
 * The checks where input enters: one option checker for every API that takes an options object
 * (unknown keys are refused with the nearest known key suggested), and the one rule for backend names.
 */
import { DispatchHookError, describe } from "./errors.js";

/** Edit distance between two words: insertions, deletions, substitutions, and swaps of two neighbours (`nmupy` is one from `numpy`). */
export function distance(a: string, b: string): number {
  let before: number[] = []; // the row two back, for swaps
  let last = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min((last[j] as number) + 1, (row[j - 1] as number) + 1, (last[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] as number) + 1);
      row.push(d);
    }
    before = last;
    last = row;
  }
  return last[b.length] as number;
}

/** The nearest known word, if it is near enough to be a typo. */
export function suggest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** ` (did you mean "x"?)`, or nothing. */
export function didYouMean(word: string, known: readonly string[]): string {
  const hint = suggest(word, known);
  return hint === undefined ? "" : ` (did you mean ${JSON.stringify(hint)}?)`;
}

/**
 * What a value must be: a kind name, or a list of the literal values allowed ("any": checked by the
 * caller, with its own code; "names": a list of non-empty strings, such as backend names).
 */
type OptionKind = "any" | "boolean" | "string" | "name" | "names" | "function" | "object" | "array" | "registry" | readonly string[];

function fits(value: unknown, kind: OptionKind): boolean {
  if (Array.isArray(kind)) return typeof value === "string" && kind.includes(value);
  switch (kind) {
    case "any":
      return true;
    case "name":
      return typeof value === "string" && value !== "";
    case "array":
    case "names":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "registry":
      return typeof value === "object" && value !== null && typeof (value as { register?: unknown }).register === "function";
    default:
      return typeof value === kind;
  }
}

function kindText(kind: OptionKind): string {
  if (Array.isArray(kind)) return `one of ${kind.map((k) => JSON.stringify(k)).join(", ")}`;
  if (kind === "name") return "a non-empty string";
  if (kind === "names") return "an array of names";
  return `${kind === "array" || kind === "object" ? "an" : "a"} ${kind}`;
}

/** Runs `read`; what it throws (a getter's error, a revoked proxy's) becomes ERR_DISPATCH_INVALID_OPTION saying `what` cannot be read. */
function reading<T>(read: () => T, where: string, what: string): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof DispatchHookError) throw error;
    const reason = error instanceof Error ? error.message : describe(error);
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `${where}: ${what} cannot be read (${reason}).`, { cause: error });
  }
}

/** A list of names, copied (read once), or an error naming its first element that is not a non-empty string. */
function readNames(list: readonly unknown[], key: string, where: string): string[] {
  const names = reading(() => Array.from(list), where, `option ${JSON.stringify(key)}`);
  const bad = names.findIndex((name) => typeof name !== "string" || name === "");
  if (bad >= 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${where}: ${JSON.stringify(key)} must list backend names, got ${describe(names[bad])} at position ${bad}.`,
    );
  }
  return names as string[];
}

/**
 * Checks an options object where it enters, and returns what it read: each option read once (own or
 * inherited), so that what was checked is what the caller uses. `where` names the call in messages.
 * `undefined` values count as absent, which the `required` keys may not be. Options that cannot be
 * read (a getter that throws, a revoked proxy) are refused like wrong ones: ERR_DISPATCH_INVALID_OPTION,
 * and nothing changes. A "names" option comes back as a copy.
 */
export function readOptions(
  value: unknown,
  spec: Readonly<Record<string, OptionKind>>,
  where: string,
  required: readonly string[] = [],
): Record<string, unknown> {
  const read: Record<string, unknown> = {};
  if (value === undefined && required.length === 0) return read;
  const keys = reading(
    () => (typeof value !== "object" || value === null || Array.isArray(value) ? undefined : Object.keys(value)),
    where,
    "options",
  );
  if (keys === undefined) {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `${where}: options must be an object, got ${describe(value)}.`);
  }
  const known = Object.keys(spec);
  for (const key of keys) {
    if (!Object.hasOwn(spec, key)) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `${where}: unknown option ${JSON.stringify(key)}${didYouMean(key, known)}; known options are ${known.join(", ")}.`,
      );
    }
  }
  for (const key of known) {
    const kind = spec[key] as OptionKind;
    const option = reading(() => (value as Record<string, unknown>)[key], where, `option ${JSON.stringify(key)}`);
    if (option === undefined && !required.includes(key)) continue;
    if (!reading(() => fits(option, kind), where, `option ${JSON.stringify(key)}`)) {
      const hint = Array.isArray(kind) && typeof option === "string" ? didYouMean(option, kind) : "";
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `${where}: "${key}" must be ${kindText(kind)}, got ${describe(option)}${hint}.`,
      );
    }
    read[key] = kind === "names" ? readNames(option as unknown[], key, where) : option;
  }
  return read;
}

/** readOptions() for callers that only check. */
export function checkOptions(value: unknown, spec: Readonly<Record<string, OptionKind>>, where: string): void {
  readOptions(value, spec, where);
}

/** The audit's options, `{ backends }`: checked where they enter (verify(), format(), assertComplete(), threadAudit()). */
export function checkVerifyOptions(options: unknown, where: string, names: "backend" | "shown" = "backend"): void {
  // A backend named to verify() or assertComplete() is held to the backend-name rule (threadAudit() may name a set's, "jax [ml]").
  const backends = (options as { backends?: unknown } | null | undefined)?.backends;
  if (names === "backend" && Array.isArray(backends)) for (const backend of backends) checkBackend(backend, where);
  checkOptions(options, { backends: "names" }, where);
}

const reserved = new Set(["__proto__", "constructor", "prototype"]);

/** What a backend set's backend name cannot hold: its control variables list names with "," and pair them with ">". */
export const controlSeparators = /[,>]/;

/** Why `name` cannot be a backend name (the API and config files alike), or undefined if it can. */
export function backendNameProblem(
  name: unknown,
): { code: "ERR_DISPATCH_INVALID_BACKEND" | "ERR_DISPATCH_RESERVED_NAME"; reason: string } | undefined {
  if (typeof name !== "string" || name.length === 0) {
    return { code: "ERR_DISPATCH_INVALID_BACKEND", reason: `the backend must be a non-empty string, got ${describe(name)}` };
  }
  if (reserved.has(name)) {
    return {
      code: "ERR_DISPATCH_RESERVED_NAME",
      reason: `${JSON.stringify(name)} cannot be a backend name, because it names a property of every object; choose another name`,
    };
  }
  if (/[\s/\\]/.test(name)) {
    return {
      code: "ERR_DISPATCH_INVALID_BACKEND",
      reason: `${JSON.stringify(name)} cannot be a backend name: it contains whitespace or a path separator; use a plain name such as numba`,
    };
  }
  return undefined;
}

export function checkBackend(backend: unknown, where: string): asserts backend is string {
  const problem = backendNameProblem(backend);
  if (problem !== undefined) throw new DispatchHookError(problem.code, `${where}: ${problem.reason}.`);
}
