/**
 * What a backend set checks of its declarations once it knows its backends (at its first decision,
 * which reads the package.json ones), since a name in one may refer to a backend declared later:
 * implementations keyed by a misspelt function name (every call fails while one stands), wrappers of
 * a backend it does not declare and misspelt priorities (each a warning, once), and, each time its
 * audit is read, those that still stand as `declaration` problems (a wrapper only where the backend it
 * names is a typo away from a declared one: one far from every name may wrap a package not installed).
 */
import type { AuditEvent } from "../registry/audit-events.js";
import type { Class } from "../registry/dispatcher.js";
import { DispatchHookError, warnAs } from "../registry/errors.js";
import { type Ordered, priorityTypos } from "./backend-order.js";
import { type ImplTable, unknownFunctions } from "./impl-table.js";
import type { StrayDeclaration } from "./set-input.js";
import { unknownWrapped } from "./wrapping.js";

export interface Checked extends Ordered {
  readonly table: ImplTable;
  readonly wraps: string | undefined;
}

/** Each function a backend's table has an implementation of. */
function registeredNames(backends: ReadonlyMap<string, Checked>, ops: ReadonlyMap<string, Class>): Array<{ backend: string; fn: string }> {
  return [...backends.values()].flatMap((b) =>
    [...ops].filter(([, op]) => b.table.get(op) !== undefined).map(([fn]) => ({ backend: b.name, fn })),
  );
}

/**
 * The error every call of the set fails with while an implementation is keyed by a name near one of
 * its `functions`, or undefined. A wrapper of a backend not declared (its package may be missing)
 * loses only its own calls, and a misspelt priority only bends the order: each is a warning, once
 * per set (`warned` holds what was said).
 */
export function checkDeclarations(
  set: string,
  backends: ReadonlyMap<string, Checked>,
  ops: ReadonlyMap<string, Class>,
  functions: ReadonlySet<string>,
  warned: Set<string>,
): DispatchHookError | undefined {
  for (const warning of [...unknownWrapped(set, backends), ...priorityTypos(set, backends)]) {
    const key = JSON.stringify(warning.details);
    if (warned.has(key)) continue;
    warned.add(key);
    warnAs(warning);
  }
  return unknownFunctions(set, registeredNames(backends, ops), functions);
}

/** A declaration problem of the set's audit, made when it is read; `message` as `e`'s, or another. */
const problem = (e: Pick<DispatchHookError, "code" | "message">, backend: string, message = e.message): AuditEvent => ({
  kind: "declaration",
  seq: -1,
  backend,
  code: e.code,
  message,
});
const failsEveryCall = (set: string, e: DispatchHookError, backend: string) =>
  problem(e, backend, `${e.message} Until then every call of ${set}'s functions fails.`);

/**
 * The set's declarations in force that do not do what they say, as problems of its audit: made each
 * time it is read, so one corrected since (the backend a priority names declared after all, a
 * misspelt registration disposed) is none. An implementation keyed by a misspelt function name is
 * one per backend, judged once the set has functions, called or not; a package.json backend with one
 * was left out, and is a logged problem instead. Names of backends (priorities, wrappers) are judged
 * once the set knows its backends (`known`: its first decision read its package.json declarations).
 */
export function declarationProblems(
  set: string,
  backends: ReadonlyMap<string, Checked>,
  ops: ReadonlyMap<string, Class>,
  functions: ReadonlySet<string>,
  known: boolean,
): AuditEvent[] {
  const names = registeredNames(backends, ops);
  const misspelt = [...backends.keys()].flatMap((backend) => {
    const error = unknownFunctions(
      set,
      names.filter((n) => n.backend === backend),
      functions,
    );
    return error === undefined ? [] : [failsEveryCall(set, error, backend)];
  });
  if (!known) return misspelt;
  // A wrapper of a backend a typo away from a declared one; one far from every name may wrap a package not installed.
  const typos = [...unknownWrapped(set, backends).filter((e) => e.details.near !== undefined), ...priorityTypos(set, backends)];
  return [...misspelt, ...typos.map((e) => problem(e, e.details.backend as string))];
}

/**
 * package.json declarations for a set a typo away from this one's, where no set of the name they give
 * exists: their backends are in no set, and nothing runs them (a set of that name made later clears it).
 */
export function strayDeclarations(stray: readonly StrayDeclaration[], exists: (set: string) => boolean): AuditEvent[] {
  return stray
    .filter((s) => !exists(s.set))
    .map((s) => {
      const message = `${s.declaredIn} declares backend ${JSON.stringify(s.backend)} for the backend set ${JSON.stringify(s.set)}, which no backend set of this process is (did you mean ${JSON.stringify(s.near)}?): the backend is in no set, and no call runs it.`;
      return problem({ code: "ERR_DISPATCH_BACKEND_DECLARATION", message }, s.backend);
    });
}

/** The set's order as the environment makes it (`read`), when that fails every call: a misspelt backend in a variable, a cycle. */
export function controlProblems(set: string, read: () => unknown): AuditEvent[] {
  try {
    read();
    return [];
  } catch (error) {
    if (!(error instanceof DispatchHookError)) throw error;
    return [failsEveryCall(set, error, typeof error.details.backend === "string" ? error.details.backend : "-")];
  }
}
