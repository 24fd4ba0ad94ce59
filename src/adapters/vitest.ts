/**
 * dispatch-hook/vitest: test helpers.
 * - `test`: Vitest's test with a `registry` fixture: the default registry, the one plugins' registration
 *   modules (and the loader) register into, put back after each test as it was before it (what the
 *   test registered is undone; what a plugin's registration module registered stays);
 * - `toHaveLanded`: `expect(registry).toHaveLanded(["PoolLayer"], { backend: "numba" })`, whose
 *   failure message is the audit table;
 * - `failOnPending()`: a test that leaves a registration it made pending, where the audit counts it a problem, fails with the audit.
 * Importing this module adds the matcher; `dispatch-hook/vitest/setup` (in setupFiles) adds it and failOnPending().
 */
import { afterAll, afterEach, test as base, beforeEach, expect } from "vitest";
// Through the package's main entry (kept external by the build), so that the fixture's registries
// are the same Registry class the tests import.
import {
  type AuditReport,
  DispatchHookError,
  formatReport,
  type Registry,
  type RegistrySnapshot,
  registry,
  threadAudit,
} from "../index.js";

/**
 * Tests that run at once (`test.concurrent`) share the default registry: the first to start takes the
 * snapshot, and the last to finish puts it back, so that one test's end never undoes what another
 * registered while that one still runs.
 */
let running = 0;
let before: RegistrySnapshot | undefined;

/** Vitest's `test`, with the default `registry`, restored after each test (after the last of tests running at once). */
export const test = base.extend<{ registry: Registry }>({
  // biome-ignore lint/correctness/noEmptyPattern: Vitest reads the fixture's dependencies from this pattern.
  registry: async ({}, use) => {
    if (running++ === 0) before = registry.snapshot();
    try {
      await use(registry);
    } finally {
      if (--running === 0 && before !== undefined) registry.restore(before);
    }
  },
});

interface LandedOptions {
  readonly backend?: string;
}

/** Whether every op type named landed (on the backend given), and the audit when not. */
function toHaveLanded(this: { isNot: boolean }, received: unknown, ops: readonly string[], options: LandedOptions = {}) {
  const registry = received as Registry;
  if (typeof registry?.verify !== "function") {
    return { pass: false, message: () => `toHaveLanded() needs a dispatch-hook registry, got ${String(received)}` };
  }
  // Nothing named would pass whatever landed.
  if (!Array.isArray(ops) || ops.length === 0 || ops.some((op) => typeof op !== "string")) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `toHaveLanded() needs a non-empty array of op type names, got ${JSON.stringify(ops)}.`,
    );
  }
  const report: AuditReport = registry.verify(options.backend === undefined ? {} : { backends: [options.backend] });
  const here = (backend: string) => options.backend === undefined || backend === options.backend;
  // Applied to a class nothing dispatches on (a second copy of the op's class, seen at a miss), or its entry changed around
  // the registries since (displaced: taken out, or replaced), is not landed.
  const gone = (op: string) =>
    report.problems.some((p) => (p.kind === "identity" || p.kind === "displaced") && p.op === op && here(p.backend));
  const landed = (op: string) =>
    !gone(op) &&
    (report.registrations.some((r) => r.op === op && r.state === "applied" && here(r.backend)) ||
      report.outside.some((w) => w.op === op && here(w.backend)));
  const missing = ops.filter((op) => !landed(op));
  const where = options.backend === undefined ? "" : ` on ${options.backend}`;
  // The table's own verdict may be "ok" (nothing is wrong with what was registered): it is replaced
  // by what this expectation found.
  const verdict = `not ok: ${missing.join(", ")} did not land${where}`;
  return {
    pass: missing.length === 0,
    message: () =>
      missing.length === 0
        ? `expected ${ops.join(", ")} not to have landed${where}, but they did:\n${formatReport(report)}`
        : `expected ${missing.join(", ")} to have landed${where}:\n${missing.map((op) => `  - ${whyNot(report, op, options.backend)}`).join("\n")}\n${formatReport(report, { verdict })}`,
  };
}

/** What became of an op type that did not land: never registered (there), or each registration's state and why. */
function whyNot(report: AuditReport, op: string, backend: string | undefined): string {
  const named = report.registrations.filter((r) => r.op === op);
  const mine = named.filter((r) => backend === undefined || r.backend === backend);
  if (mine.length === 0) {
    const elsewhere = named.map((r) => `${r.backend}, ${r.state}`);
    return `${op} was never registered${backend === undefined ? "" : ` on ${backend}`}${elsewhere.length === 0 ? "" : ` (it was registered on ${elsewhere.join("; ")})`}`;
  }
  return mine
    .map(
      (r) =>
        report.problems.find((p) => p.id === r.id && p.op === op)?.message ??
        `${op} on ${r.backend} (registered at ${r.site}) is ${r.state}${r.error === undefined ? "" : `: ${r.error.message}`}`,
    )
    .join("\n  - ");
}

export const matchers = { toHaveLanded };

// Importing this module adds the matcher, as its types declare; the setup file adds failOnPending().
expect.extend(matchers);

/** Registrations, anywhere in the thread, that were pending when asked: registry name and id. */
function pendingNow(): Set<string> {
  return new Set(threadAudit().registrations.flatMap((r) => (r.state === "pending" ? [`${r.registry} #${r.id}`] : [])));
}

/** Registrations pending since `before` (not among them) where the audit counts them a problem, with the error that names them. */
function leftPending(before: ReadonlySet<string>, who: string): DispatchHookError | undefined {
  const report = threadAudit();
  const problem = new Set(report.problems.flatMap((p) => (p.kind === "pending" ? [`${p.backend} ${p.op}`] : [])));
  const left = report.registrations.filter(
    (r) => r.state === "pending" && !before.has(`${r.registry} #${r.id}`) && problem.has(`${r.backend} ${r.op}`),
  );
  if (left.length === 0) return undefined;
  const what = `${left.length} registration${left.length === 1 ? "" : "s"} pending: ${left.map((r) => `${r.op} on ${r.backend}`).join(", ")}`;
  return new DispatchHookError(
    "ERR_DISPATCH_INCOMPLETE",
    `${who} left ${what}.\n${formatReport(report, { verdict: "not ok: registrations left pending" })}`,
  );
}

/**
 * Makes a test fail when it leaves a registration it made pending where the audit counts it a
 * problem: its backend loaded, was named to assertComplete(), or has a table that never reached
 * dispatch-hook. One waiting for a backend that never loaded is no failure, as in the audit: a plugin
 * a test imports registers for every backend it supports. Tests that ran at once (`test.concurrent`)
 * cannot be told apart: what they left is judged when the last of them ends, and fails their file.
 */
export function failOnPending(): void {
  const running = new Set<{ readonly result?: { readonly state?: string } }>();
  const firstAttempt = new WeakMap<object, Set<string>>();
  let group: { before: Set<string>; names: string[]; overlapped: boolean } | undefined;
  const unjudged: DispatchHookError[] = [];
  // Destructured: Vitest reads a hook's first parameter as fixtures, and refuses any other form.
  beforeEach(({ task }) => {
    // A test whose afterEach this never saw (an afterEach before it threw) is over: it must not hold its group open.
    for (const t of running) if (t.result?.state !== "run") running.delete(t);
    // A retry (or repeat) is judged against what was pending before its first attempt: an earlier attempt's pending registration stays its.
    const first = firstAttempt.get(task) ?? pendingNow();
    firstAttempt.set(task, first);
    if (group === undefined || running.size === 0) group = { before: first, names: [], overlapped: false };
    else group.overlapped = true;
    running.add(task);
    group.names.push(task.name);
  });
  afterEach(({ task }) => {
    running.delete(task);
    if (group === undefined || running.size > 0) return;
    const { before, names, overlapped } = group;
    group = undefined;
    // A test.fails test that failed would pass for this error too: its file fails instead.
    const expectsFailure = (task as { fails?: boolean }).fails === true;
    const who = overlapped
      ? `One of the tests that ran at once (${names.join(", ")})`
      : expectsFailure
        ? `The test "${task.name}" (test.fails: its own failure is expected, so the file fails for this)`
        : "This test";
    const error = leftPending(before, who);
    if (error === undefined) return;
    // Which of them made it cannot be told: the file fails, not the test that happened to end last.
    if (overlapped || expectsFailure) unjudged.push(error);
    else throw error;
  });
  afterAll(() => {
    const errors = unjudged.splice(0); // with isolate: false the next file starts clean
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new DispatchHookError("ERR_DISPATCH_INCOMPLETE", errors.map((e) => e.message).join("\n\n"));
  });
}

declare module "vitest" {
  interface Assertion<T> {
    toHaveLanded(ops: readonly string[], options?: LandedOptions): T;
  }
}

export { expect };
