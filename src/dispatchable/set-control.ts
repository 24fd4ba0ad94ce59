/**
 * What shapes a backend set's order for a call: the declared order bent by priorities, the
 * environment's control variables, and the current scope's `prioritize` and `disable`. Computed once
 * per set version and per scope key.
 *
 * A scope is seen by every set in the realm, so a backend it names that this set does not declare
 * may be another set's: it is ignored here. A name that no set in the realm declares is a typo, and
 * the call fails with ERR_DISPATCH_UNKNOWN_BACKEND, naming the function and the nearest backend.
 */
import { hub } from "../hub.js";
import { DispatchHookError } from "../registry/errors.js";
import { didYouMean } from "../registry/options.js";
import { type EnvControl, noEnvControl, type Ordered, prioritize, readEnvControl, sortBackends } from "./backend-order.js";
import type { Scope } from "./options-scope.js";
import type { Control, PlanBackend } from "./plan.js";
import { WeakCache } from "./weak-cache.js";

type Backend = Ordered & PlanBackend;

/** Every backend name any set of the realm declares, shared by every copy ("@1": a Set of names). */
export function realmBackends(): Set<string> {
  return hub().shared("backend-names@1", () => new Set<string>());
}

export class SetControl {
  readonly #set: string;
  readonly #prefix: string;
  readonly #env: Readonly<Record<string, string | undefined>>;
  #sorted: { version: number; env: EnvControl; order: Backend[] } | undefined;
  readonly #scoped = new WeakCache<{ version: number; control: Control }>();
  #plain: { version: number; control: Control } | undefined;

  constructor(set: string, prefix: string, env: Readonly<Record<string, string | undefined>>) {
    this.#set = set;
    this.#prefix = prefix;
    this.#env = env;
  }

  /** The order and the blocks for a scope (undefined: no scope); `fn` names the call in errors. */
  control(backends: ReadonlyMap<string, Backend>, version: number, scope: Scope | undefined, fn?: string): Control {
    const cached = scope === undefined ? this.#plain : this.#scoped.get(scope.key);
    if (cached !== undefined && cached.version === version) return cached.control;
    if (this.#sorted?.version !== version) {
      const all = [...backends.values()];
      const known = new Set(all.map((b) => b.name));
      const env = known.size === 0 ? noEnvControl : readEnvControl(this.#prefix, this.#env, known, fn, this.#set);
      const names = prioritize(sortBackends(all, env.order, `${this.#prefix}_SET_ORDER`), env.prioritize);
      this.#sorted = { version, env, order: names.map((n) => backends.get(n) as Backend) };
    }
    if (scope !== undefined) this.#checkNames(backends, scope, fn);
    const { env, order } = this.#sorted;
    const blocked = new Map<string, string>();
    for (const name of env.block) blocked.set(name, `blocked by ${this.#prefix}_BLOCK`);
    for (const name of scope?.disable ?? []) blocked.set(name, "disabled by backendOptions()");
    const first = scope?.prioritize ?? [];
    const sorted =
      first.length === 0
        ? order
        : prioritize(
            order.map((b) => b.name),
            first,
          ).map((n) => backends.get(n) as Backend);
    const control: Control = { order: sorted, blocked, optedIn: new Set([...env.prioritize, ...first]) };
    const entry = { version, control };
    if (scope === undefined) this.#plain = entry;
    else this.#scoped.set(scope.key, entry);
    return control;
  }

  #checkNames(backends: ReadonlyMap<string, Backend>, scope: Scope, fn: string | undefined): void {
    const realm = realmBackends();
    for (const name of [...scope.prioritize, ...scope.disable]) {
      if (backends.has(name) || realm.has(name)) continue;
      const mine = [...backends.keys()];
      throw new DispatchHookError(
        "ERR_DISPATCH_UNKNOWN_BACKEND",
        `${fn === undefined ? "" : `${fn}(): `}backendOptions() names the backend ${JSON.stringify(name)}, which no backend set declares${didYouMean(name, mine)}. ` +
          `Backends of ${this.#set}: ${mine.join(", ") || "none"}.`,
        { details: { backend: name, function: fn, set: this.#set } },
      );
    }
  }
}
