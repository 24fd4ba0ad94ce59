/**
 * The order a set's backends are tried in: declaration order, bent by `higherPriorityThan` /
 * `lowerPriorityThan` and `<PREFIX>_SET_ORDER=jax>numpy` pairs (a stable topological sort), then by
 * the prioritized backends, `<PREFIX>_PRIORITIZE`'s and the scope's; `<PREFIX>_BLOCK` keeps some out.
 * An invalid value fails the call that reads it: ignored, as these once were, it would send work to a
 * backend its author meant to keep out. Computed once per set version and per scope key.
 */

import { hub } from "../hub.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import { didYouMean } from "../registry/options.js";
import { nearName } from "./impl-table.js";
import type { Scope } from "./options-scope.js";
import type { Control, PlanBackend } from "./plan.js";
import { declaredInPackages } from "./set-input.js";
import { WeakCache } from "./weak-cache.js";

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
  /** From the explicit order (the environment's), which only a declared constraint gives way to. */
  readonly explicit?: boolean;
}

/** Where an order is asked for, for its errors: the set, the function whose call asks, the variable the explicit order comes from. */
export interface OrderSite {
  readonly set?: string;
  readonly fn?: string | undefined;
  readonly variable?: string;
}

export function sortBackends(
  backends: readonly Ordered[],
  extra: ReadonlyArray<readonly [string, string]> = [],
  extraSource = "the environment",
  site: OrderSite = {},
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
  // An explicit order (the environment's) wins over a declared constraint it contradicts; two of its
  // own pairs that contradict each other are a cycle, as declared ones are.
  for (const [before, after] of extra) {
    if (!known.has(before) || !known.has(after)) continue;
    for (let i = edges.length - 1; i >= 0; i--) {
      const e = edges[i] as Edge;
      if (e.before === after && e.after === before && e.explicit !== true) edges.splice(i, 1);
    }
    edges.push({ before, after, source: `${before}>${after} from ${extraSource}`, explicit: true });
  }
  // A declared constraint the explicit order contradicts through others (cupy>numpy, numpy>jax
  // declared, jax>cupy given) goes too; a cycle of declared constraints alone, or of explicit ones
  // alone, is an error.
  for (;;) {
    const sorted = topological(names, edges);
    if (Array.isArray(sorted)) return sorted;
    const onCycle = sorted.cycle.map((after, i, cycle) => {
      const before = cycle[(i + 1) % cycle.length];
      return edges.find((e) => e.before === before && e.after === after) as Edge;
    });
    if (!onCycle.some((e) => e.explicit === true) || onCycle.every((e) => e.explicit === true)) throw cycleError(sorted.cycle, edges, site);
    for (const e of onCycle) if (e.explicit !== true) edges.splice(edges.indexOf(e), 1);
  }
}

/**
 * Each backend in declaration order, preceded by whatever must come before it (themselves in
 * declaration order): a constraint moves only the backends it names. Or a cycle: each name's
 * next must come before it.
 */
function topological(names: readonly string[], edges: readonly Edge[]): string[] | { cycle: string[] } {
  const before = new Map<string, string[]>(names.map((n) => [n, []]));
  for (const e of edges) before.get(e.after)?.push(e.before);
  for (const list of before.values()) list.sort((x, y) => names.indexOf(x) - names.indexOf(y));
  const out: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]): string[] | undefined => {
    const now = state.get(name);
    if (now === "done") return undefined;
    if (now === "visiting") return path.slice(path.indexOf(name));
    state.set(name, "visiting");
    for (const first of before.get(name) ?? []) {
      const cycle = visit(first, [...path, name]);
      if (cycle !== undefined) return cycle;
    }
    state.set(name, "done");
    out.push(name);
    return undefined;
  };
  for (const name of names) {
    const cycle = visit(name, []);
    if (cycle !== undefined) return { cycle };
  }
  return out;
}

/**
 * The priority constraints that name no backend of the set but one near a backend it declares
 * (`higherPriorityThan: ["nmupy"]` beside numpy): each orders nothing, so the set's order is not the
 * one its author meant. A name near none may be a backend whose package is not installed, and is left
 * alone. Judged once the set knows its backends (its first decision), each time it is asked.
 */
export function priorityTypos(set: string, backends: ReadonlyMap<string, Ordered>): DispatchHookError[] {
  const errors: DispatchHookError[] = [];
  for (const b of backends.values()) {
    for (const option of ["higherPriorityThan", "lowerPriorityThan"] as const) {
      for (const name of b[option]) {
        if (backends.has(name)) continue;
        const near = nearName(
          name,
          [...backends.keys()].filter((other) => other !== b.name),
        );
        if (near === undefined) continue;
        errors.push(
          new DispatchHookError(
            "ERR_DISPATCH_BACKEND_DECLARATION",
            `Backend ${JSON.stringify(b.name)} of ${set} names ${JSON.stringify(name)} in ${option}, which the set does not declare (did you mean ${JSON.stringify(near)}?), ` +
              `so the constraint orders nothing. Its backends: ${[...backends.keys()].join(", ")}. To fix: correct the name in ${option}.`,
            { details: { set, backend: b.name, option, name, near } },
          ),
        );
      }
    }
  }
  return errors;
}

function cycleError(left: readonly string[], edges: readonly Edge[], site: OrderSite): DispatchHookError {
  // The cycle's own edges: each backend of the walk comes before the one that led to it, and the first before the last.
  const links = left.map((after, i) => [left[(i + 1) % left.length], after] as const);
  const involved = edges.filter((e) => links.some(([before, after]) => e.before === before && e.after === after));
  const variable = site.variable ?? "the <PREFIX>_SET_ORDER variable";
  // A link the explicit order asks for stays whatever is declared: only a link it does not ask for can be dropped.
  const explicit = (e: Edge) => involved.some((x) => x.explicit === true && x.before === e.before && x.after === e.after);
  const droppable = involved.find((e) => !explicit(e));
  const pairs = [...new Set(involved.filter(explicit).map((e) => `${e.before}>${e.after}`))].join(", ");
  const fix =
    droppable === undefined
      ? `correct ${variable}: drop one of ${pairs}`
      : `drop one of these constraints (for example ${droppable.source}), or order the backends explicitly with ${variable}`;
  const what = `priorities of backends ${left.join(", ")}${site.set === undefined ? "" : ` of ${site.set}`} form a cycle`;
  return new DispatchHookError(
    "ERR_DISPATCH_PRIORITY_CYCLE",
    `${site.fn === undefined ? `The ${what}` : `${site.fn}(): the ${what}`}: ${involved.map((e) => e.source).join("; ")}. To fix: ${fix}.`,
    {
      details: {
        backends: left,
        constraints: involved.map((e) => e.source),
        ...(site.set === undefined ? {} : { set: site.set }),
        ...(site.fn === undefined ? {} : { function: site.fn }),
        ...(site.variable !== undefined && involved.some((e) => e.explicit === true) ? { variable: site.variable } : {}),
      },
    },
  );
}

/** Moves `first` (in its own order) to the front of `order`, keeping the rest in place. */
export function prioritize(order: readonly string[], first: readonly string[]): string[] {
  const present = first.filter((name, i) => order.includes(name) && first.indexOf(name) === i);
  return [...present, ...order.filter((name) => !present.includes(name))];
}

const list = (value: string): string[] => value.split(",").flatMap((s) => (s.trim() === "" ? [] : [s.trim()]));

/** Reads the variables; `known` are the set's backend names, `fn` the function whose call reads them. */
export function readEnvControl(
  prefix: string,
  env: Readonly<Record<string, string | undefined>>,
  known: ReadonlySet<string>,
  fn: string | undefined,
  set: string,
) {
  const where = (name: string, value: string) => `${fn === undefined ? "" : `${fn}(): `}${name}=${JSON.stringify(value)}`;
  const check = (name: string, value: string, backend: string) => {
    if (known.has(backend)) return;
    throw new DispatchHookError(
      "ERR_DISPATCH_UNKNOWN_BACKEND",
      `${where(name, value)} names the backend ${JSON.stringify(backend)}, which ${set} does not declare${didYouMean(backend, [...known])}. ` +
        `Backends of ${set}: ${[...known].join(", ") || "none"}. To fix: correct the variable or unset it.`,
      { details: { backend, function: fn, variable: name, set } },
    );
  };
  const variable = (name: string): string => {
    const value: unknown = env[name];
    if (value === undefined || typeof value === "string") return value ?? "";
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${fn === undefined ? "" : `${fn}(): `}${name} in the environment of ${set} must be a string of backend names, got ${describe(value)}.`,
      { details: { function: fn, variable: name, set } },
    );
  };
  const names = (suffix: string): string[] => {
    const name = `${prefix}_${suffix}`;
    const value = variable(name);
    const items = list(value);
    for (const item of items) check(name, value, item);
    return items;
  };
  const orderName = `${prefix}_SET_ORDER`;
  const orderValue = variable(orderName);
  const order: Array<readonly [string, string]> = [];
  for (const item of list(orderValue)) {
    const pair = item.split(">").map((s) => s.trim());
    const [before, after] = pair as [string, string];
    if (pair.length !== 2 || before === "" || after === "" || before === after) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `${where(orderName, orderValue)}: ${JSON.stringify(item)} is not "higher>lower" with two different backends. To fix: write pairs such as ${JSON.stringify(known.size >= 2 ? [...known].slice(0, 2).join(">") : "a>b")}, separated by commas.`,
        { details: { function: fn, variable: orderName, set } },
      );
    }
    check(orderName, orderValue, before);
    check(orderName, orderValue, after);
    order.push([before, after]);
  }
  return { prioritize: names("PRIORITIZE"), block: names("BLOCK"), order };
}

type Backend = Ordered & PlanBackend;

/** The names of the backend sets made in the realm, by every copy (the ES module and CommonJS builds alike). */
export function realmSets(): Set<string> {
  return hub().shared("backend-set-names@1", () => new Set<string>());
}

/** Every backend name any set of the realm declares, shared by every copy ("@1": a Set of names). */
export function realmBackends(): Set<string> {
  return hub().shared("backend-names@1", () => new Set<string>());
}

/** A set's order and blocks for a scope (undefined: none), cached per version and scope key; `fn` names the call in errors. */
export function setControl(set: string, prefix: string, env: Readonly<Record<string, string | undefined>>) {
  let sorted: { version: number; env: ReturnType<typeof readEnvControl>; order: Backend[] } | undefined;
  const scoped = new WeakCache<{ version: number; control: Control }>();
  let plain: { version: number; control: Control } | undefined;

  /** A scope is seen by every set of the realm: a name another set declares is left alone, one no set declares is a typo. */
  const checkNames = (backends: ReadonlyMap<string, Backend>, scope: Scope, fn: string | undefined): void => {
    const realm = realmBackends();
    for (const name of [...scope.prioritize, ...scope.disable]) {
      if (backends.has(name) || realm.has(name) || declaredInPackages(name)) continue;
      const mine = [...backends.keys()];
      throw new DispatchHookError(
        "ERR_DISPATCH_UNKNOWN_BACKEND",
        `${fn === undefined ? "" : `${fn}(): `}backendOptions() names the backend ${JSON.stringify(name)}, which no backend set declares${didYouMean(name, mine)}. ` +
          `Backends of ${set}: ${mine.join(", ") || "none"}.`,
        { details: { backend: name, function: fn, set } },
      );
    }
  };

  // The variables as they were at the set's first call that read them without an error, whatever changes after: a call
  // never depends on when a registration made the set read them again. Checked against the set's backends as they are.
  let values: Record<string, string | undefined> | undefined;
  return (backends: ReadonlyMap<string, Backend>, version: number, scope: Scope | undefined, fn?: string): Control => {
    const cached = scope === undefined ? plain : scoped.get(scope.key);
    if (cached !== undefined && cached.version === version) return cached.control;
    if (sorted?.version !== version) {
      const all = [...backends.values()];
      const known = new Set(all.map((b) => b.name));
      const now = values ?? Object.fromEntries(["PRIORITIZE", "BLOCK", "SET_ORDER"].map((s) => [`${prefix}_${s}`, env[`${prefix}_${s}`]]));
      const read = readEnvControl(prefix, now, known, fn, set); // a set with no backends fails on a name too
      const variable = `${prefix}_SET_ORDER`;
      const names = prioritize(sortBackends(all, read.order, variable, { set, fn, variable }), read.prioritize);
      values = now; // kept once read and ordered without an error: until then each call reads them (a value corrected)
      sorted = { version, env: read, order: names.map((n) => backends.get(n) as Backend) };
    }
    if (scope !== undefined) checkNames(backends, scope, fn);
    const { order } = sorted;
    const blocked = new Map<string, string>();
    for (const name of sorted.env.block) blocked.set(name, `blocked by ${prefix}_BLOCK`);
    for (const name of scope?.disable ?? []) blocked.set(name, "disabled by backendOptions()");
    const first = scope?.prioritize ?? [];
    const ordered =
      first.length === 0
        ? order
        : prioritize(
            order.map((b) => b.name),
            first,
          ).map((n) => backends.get(n) as Backend);
    const control: Control = { order: ordered, blocked, optedIn: new Set([...sorted.env.prioritize, ...first]) };
    if (scope === undefined) plain = { version, control };
    else scoped.set(scope.key, { version, control });
    return control;
  };
}
