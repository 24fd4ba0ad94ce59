/**
 * The order in which backends are tried: declaration order, bent by each backend's
 * `higherPriorityThan` / `lowerPriorityThan` and by ordering pairs from the environment, through a
 * stable topological sort (each backend in declaration order, after the ones that must precede it).
 * A cycle is an error that names the constraints forming it.
 *
 * Backend control from the environment, under a prefix the framework chooses:
 * - `<PREFIX>_PRIORITIZE=cupy,jax`: try these first, in this order (and allow those that require opt-in);
 * - `<PREFIX>_BLOCK=jax`: never use these;
 * - `<PREFIX>_SET_ORDER=jax>numpy,cupy>jax`: extra ordering pairs.
 * An invalid value (an unknown backend, a malformed pair) warns with DISPATCH_HOOK_BACKEND_ENV and is
 * ignored, entirely: a half-applied setting would be harder to notice than none.
 */
import { DispatchHookError } from "../registry/errors.js";

export interface Ordered {
  readonly name: string;
  readonly higherPriorityThan: readonly string[];
  readonly lowerPriorityThan: readonly string[];
}

/** An edge `before → after`, and who asked for it. */
interface Edge {
  readonly before: string;
  readonly after: string;
  readonly source: string;
}

export function sortBackends(
  backends: readonly Ordered[],
  extra: ReadonlyArray<readonly [string, string]> = [],
  extraSource = "the environment",
): string[] {
  const names = backends.map((b) => b.name);
  const known = new Set(names);
  const edges: Edge[] = [];
  for (const b of backends) {
    for (const other of b.higherPriorityThan)
      if (known.has(other)) edges.push({ before: b.name, after: other, source: `${b.name} higherPriorityThan ${other}` });
    for (const other of b.lowerPriorityThan)
      if (known.has(other)) edges.push({ before: other, after: b.name, source: `${b.name} lowerPriorityThan ${other}` });
  }
  // An explicit order (the environment's) wins over a declared constraint it contradicts.
  for (const [before, after] of extra) {
    if (!known.has(before) || !known.has(after)) continue;
    for (let i = edges.length - 1; i >= 0; i--) if (edges[i]?.before === after && edges[i]?.after === before) edges.splice(i, 1);
    edges.push({ before, after, source: `${before}>${after} from ${extraSource}` });
  }
  // Each backend in declaration order, preceded by whatever must come before it (themselves in
  // declaration order): a constraint moves only the backends it names.
  const before = new Map<string, string[]>(names.map((n) => [n, []]));
  for (const e of edges) before.get(e.after)?.push(e.before);
  for (const list of before.values()) list.sort((x, y) => names.indexOf(x) - names.indexOf(y));
  const out: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]): void => {
    const now = state.get(name);
    if (now === "done") return;
    if (now === "visiting") throw cycleError(path.slice(path.indexOf(name)), edges);
    state.set(name, "visiting");
    for (const first of before.get(name) ?? []) visit(first, [...path, name]);
    state.set(name, "done");
    out.push(name);
  };
  for (const name of names) visit(name, []);
  return out;
}

function cycleError(left: readonly string[], edges: readonly Edge[]): DispatchHookError {
  const inCycle = new Set(left);
  const involved = edges.filter((e) => inCycle.has(e.before) && inCycle.has(e.after));
  return new DispatchHookError(
    "ERR_DISPATCH_PRIORITY_CYCLE",
    `The priorities of backends ${left.join(", ")} form a cycle: ${involved.map((e) => e.source).join("; ")}. ` +
      `To fix: drop one of these constraints (for example ${involved[0]?.source ?? "one of them"}), or order the backends explicitly with <PREFIX>_SET_ORDER.`,
    { details: { backends: left, constraints: involved.map((e) => e.source) } },
  );
}

/** Moves `first` (in its own order) to the front of `order`, keeping the rest in place. */
export function prioritize(order: readonly string[], first: readonly string[]): string[] {
  const present = first.filter((name, i) => order.includes(name) && first.indexOf(name) === i);
  return [...present, ...order.filter((name) => !present.includes(name))];
}

export interface EnvControl {
  readonly prioritize: readonly string[];
  readonly block: readonly string[];
  readonly order: ReadonlyArray<readonly [string, string]>;
}

export const noEnvControl: EnvControl = { prioritize: [], block: [], order: [] };

function list(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** Reads the variables; `known` are the backend names declared so far. */
export function readEnvControl(
  prefix: string,
  env: Readonly<Record<string, string | undefined>>,
  known: ReadonlySet<string>,
  warned: Set<string> = new Set(),
  fn?: string,
): EnvControl {
  // Said once per setting, naming the function whose call first read it.
  const warn = (name: string, value: string, why: string) => {
    const text = `${name}=${JSON.stringify(value)} is ignored: ${why}. Known backends: ${[...known].join(", ") || "none"}.`;
    if (warned.has(text)) return;
    warned.add(text);
    process.emitWarning(fn === undefined ? text : `${text} (read for ${fn}())`, { code: "DISPATCH_HOOK_BACKEND_ENV" });
  };
  const names = (suffix: string): string[] => {
    const name = `${prefix}_${suffix}`;
    const value = env[name];
    if (value === undefined || value.trim() === "") return [];
    const items = list(value);
    const unknown = items.filter((item) => !known.has(item));
    if (unknown.length > 0) {
      warn(
        name,
        value,
        `${unknown.map((u) => JSON.stringify(u)).join(", ")} ${unknown.length === 1 ? "is not a backend" : "are not backends"}`,
      );
      return [];
    }
    return items;
  };
  const orderName = `${prefix}_SET_ORDER`;
  const orderValue = env[orderName];
  let order: Array<readonly [string, string]> = [];
  if (orderValue !== undefined && orderValue.trim() !== "") {
    const pairs = list(orderValue).map((item) => item.split(">").map((s) => s.trim()));
    const bad = pairs.find((p) => p.length !== 2 || !known.has(p[0] as string) || !known.has(p[1] as string) || p[0] === p[1]);
    if (bad !== undefined)
      warn(orderName, orderValue, `${JSON.stringify(bad.join(">"))} is not "higher>lower" with two different known backends`);
    else order = pairs.map((p) => [p[0] as string, p[1] as string] as const);
  }
  return { prioritize: names("PRIORITIZE"), block: names("BLOCK"), order };
}
