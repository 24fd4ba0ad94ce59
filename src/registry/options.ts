/**
 * The checks where input enters: one option checker for every API that takes an options object
 * (unknown keys are refused with the nearest known key suggested), and the one rule for backend names.
 */
import { DispatchHookError, describe } from "./errors.js";

/** Levenshtein distance between two words. */
export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min(current + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length] as number;
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

/** What a value must be: a kind name, or a list of the literal values allowed ("any": checked by the caller, with its own code). */
type OptionKind = "any" | "boolean" | "string" | "name" | "function" | "object" | "array" | "registry" | readonly string[];

function fits(value: unknown, kind: OptionKind): boolean {
  if (Array.isArray(kind)) return typeof value === "string" && kind.includes(value);
  switch (kind) {
    case "any":
      return true;
    case "name":
      return typeof value === "string" && value !== "";
    case "array":
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
  return `${kind === "array" || kind === "object" ? "an" : "a"} ${kind}`;
}

/**
 * Checks an options object where it enters: `where` names the call in messages. `undefined` values
 * count as absent, which the `required` keys may not be. Throws ERR_DISPATCH_INVALID_OPTION and changes nothing.
 */
export function checkOptions(
  value: unknown,
  spec: Readonly<Record<string, OptionKind>>,
  where: string,
  required: readonly string[] = [],
): void {
  if (value === undefined && required.length === 0) return;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `${where}: options must be an object, got ${describe(value)}.`);
  }
  const known = Object.keys(spec);
  for (const key of [...Object.keys(value), ...required]) {
    const kind = spec[key];
    if (kind === undefined || !Object.hasOwn(spec, key)) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `${where}: unknown option ${JSON.stringify(key)}${didYouMean(key, known)}; known options are ${known.join(", ")}.`,
      );
    }
    const option = (value as Record<string, unknown>)[key];
    if ((option !== undefined || required.includes(key)) && !fits(option, kind)) {
      const hint = Array.isArray(kind) && typeof option === "string" ? didYouMean(option, kind) : "";
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `${where}: "${key}" must be ${kindText(kind)}, got ${describe(option)}${hint}.`,
      );
    }
  }
}

/** The audit's options, `{ backends }`: checked where they enter (verify(), format(), assertComplete(), threadAudit()). */
export function checkVerifyOptions(options: unknown, where: string): void {
  checkOptions(options, { backends: "array" }, where);
  const backends = (options as { backends?: readonly unknown[] } | undefined)?.backends ?? [];
  const bad = backends.findIndex((backend) => typeof backend !== "string" || backend === "");
  if (bad >= 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${where}: "backends" must list backend names, got ${describe(backends[bad])}.`,
    );
  }
}

const reserved = new Set(["__proto__", "constructor", "prototype"]);

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
