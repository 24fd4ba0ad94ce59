import { describe, expect, it } from "vitest";
import { fold } from "../../src/registry/audit-fold.js";
import type { ThreadFacts } from "../../src/registry/audit-report.js";
import { buildReport } from "../../src/registry/audit-report.js";

const requested = (id: number, backend: string, op: string) => ({ kind: "requested", seq: id, id, backend, op, site: "a.js:1" });
const noFacts: ThreadFacts = { tables: [], loaders: [], windows: [] };
const loader = {
  mode: "registerHooks",
  backends: ["{backend}"],
  files: ["/app/package.json"],
  root: "/app",
  declarations: ["{backend} (tensorkit: ./b/{backend}.js)"],
};

describe("buildReport", () => {
  it("a pending registration is a problem once its backend loaded anywhere in the thread, or when named", () => {
    const f = fold([requested(0, "cpu", "Conv")]);
    expect(buildReport([f], noFacts, { connected: false }).problems).toEqual([]);
    const loaded = { ...noFacts, tables: [{ backend: "cpu", module: "file:///b/cpu.js", names: new Set<string>() }] };
    expect(buildReport([f], loaded, { connected: false }).problems[0]?.message).toContain("still pending although a cpu table exists");
    expect(buildReport([f], noFacts, { connected: false, focus: ["cpu"] }).problems[0]?.message).toContain(
      "no dispatch-hook loader is installed",
    );
    // Under a host adapter (Vitest's plugin) there is no loader, and the advice is not to add one.
    const hosted = {
      ...noFacts,
      tables: [{ backend: "gpu", module: "/b/gpu.js", names: new Set<string>(), host: { name: "dispatch-hook/vite", plugins: [] } }],
    };
    const message = buildReport([f], hosted, { connected: false, focus: ["cpu"] }).problems[0]?.message;
    expect(message).toContain("dispatch-hook/vite serves this thread's modules, but no module declared for cpu finished loading");
    expect(message).not.toContain("--import");
    // Also before any of its modules loaded: its setup file said it serves the thread (found by a new user's trial).
    const told = { ...noFacts, hosts: ["dispatch-hook/vite"] };
    const early = buildReport([f], told, { connected: false, focus: ["cpu"] }).problems[0]?.message;
    expect(early).toContain("dispatch-hook/vite serves this thread's modules, but no module declared for cpu finished loading");
    expect(early).not.toContain("--import");
    const stray = { ...told, unannounced: [{ backend: "cpu", name: "cpu table" }] };
    const strayMessage = buildReport([f], stray, { connected: false, focus: ["cpu"] }).problems[0]?.message;
    expect(strayMessage).toContain("nothing watches the module that made it");
    expect(strayMessage).not.toContain("--import");
  });

  it("with no loader, a backend the program said it needs that has no table is a no-loader problem; registrations alone are not", () => {
    const expected = fold([{ kind: "expected", seq: 0, backend: "cpu", ops: ["Conv"], source: "app.js:3" }]);
    const kinds = (facts: ThreadFacts, scope: Parameters<typeof buildReport>[2], folds = [expected]) =>
      buildReport(folds, facts, scope).problems.map((p) => [p.kind, p.backend]);
    // Expected, named, or (for a connected report) named to assertComplete() anywhere in the thread.
    expect(kinds(noFacts, { connected: false })).toEqual([["no-loader", "cpu"]]);
    expect(buildReport([expected], noFacts, { connected: false }).problems[0]?.message).toContain(
      "cpu was expected to hold Conv (by app.js:3), but no dispatch-hook loader is installed in this thread, no host adapter's module announced a table, and no cpu table reached dispatch-hook",
    );
    expect(kinds(noFacts, { connected: false, focus: ["gpu"] }, [])).toEqual([["no-loader", "gpu"]]);
    const asserted = { ...noFacts, asserted: new Set(["tpu"]) };
    expect(kinds(asserted, { connected: true }, [])).toEqual([["no-loader", "tpu"]]);
    expect(kinds(asserted, { connected: false }, [])).toEqual([]);
    // A table of the backend (the native route), a loader, or a host adapter's table lifts it.
    const cpuTable = { backend: "cpu", module: undefined, names: new Set(["Conv"]) };
    expect(kinds({ ...noFacts, tables: [cpuTable] }, { connected: false })).toEqual([]);
    expect(kinds({ ...noFacts, loaders: [loader] }, { connected: false })).toEqual([]);
    const hosted = {
      backend: "gpu",
      module: "file:///b/gpu.js",
      names: new Set<string>(),
      host: { name: "dispatch-hook/vite", plugins: [] },
    };
    expect(kinds({ ...noFacts, tables: [hosted] }, { connected: false })).toEqual([]);
    // A registration for a backend that never loaded says nothing about whether the app needs it.
    expect(kinds(noFacts, { connected: true }, [fold([requested(0, "jax", "Conv")])])).toEqual([]);
  });

  it("checks a connected loader's expectations on every backend that loaded, against what the tables hold", () => {
    const facts: ThreadFacts = {
      tables: [{ backend: "cpu", module: "file:///b/cpu.js", names: new Set(["Conv"]) }],
      loaders: [
        {
          ...loader,
          plugins: [
            { name: "kit-ops", declaredIn: "/kit/package.json", registrations: {}, expects: { cpu: ["Conv", "Pool"], gpu: ["Conv"] } },
          ],
        },
      ],
      windows: [],
    };
    const report = buildReport([], facts, { connected: true });
    expect(report.problems.map((p) => [p.kind, p.backend, p.op])).toEqual([["missing", "cpu", "Pool"]]);
    expect(report.checked).toBe(2);
    expect(report.backends).toEqual([
      { backend: "cpu", tables: 1, loaded: true, sealed: false },
      { backend: "gpu", tables: 0, loaded: false, sealed: false },
    ]);
    // An isolated registry does not answer for the loader's plugins.
    expect(buildReport([], facts, { connected: false }).problems).toEqual([]);
  });

  it("says when the loader watches nothing, and what it saw when nothing was checked", () => {
    const report = buildReport([], { ...noFacts, loaders: [{ ...loader, declarations: [] }] }, { connected: true });
    expect(report.problems.map((p) => p.kind)).toEqual(["loader"]);
    expect(report.problems[0]?.message).toContain(
      "found no backend declaration, so it watches nothing. It started from /app and read /app/package.json",
    );
    const quiet = buildReport([], { ...noFacts, loaders: [loader] }, { connected: true });
    expect(quiet).toMatchObject({ ok: true, checked: 0 });
    expect(quiet.notes).toContain("no registrations were made; the loader watched 0 named backends, none loaded");
    // A backend loaded but never signalled is not "none loaded" beside the line that says it loaded.
    const finding = { backend: "mts", module: "file:///fw/mts.mts", problem: "unsignalled" as const, message: "mts never signalled" };
    const silent = buildReport([], { ...noFacts, loaders: [{ ...loader, backends: ["mts"], findings: [finding] }] }, { connected: true });
    expect(silent.notes).toContain("backends: mts loaded, never signalled (see below)");
    expect(silent.notes).toContain(
      "no registrations were made; the loader watched 1 named backend, none loaded; 1 loaded without signalling",
    );
  });

  it("asked about a backend that has not loaded yet, an expected op type is missing because the plugin's registration module has not run, and says so", () => {
    const plugin = {
      name: "plug",
      declaredIn: "/p/package.json",
      registrations: { numba: "file:///p/numba.js" },
      expects: { numba: ["PoolLayer"] },
    };
    const facts = { ...noFacts, loaders: [{ ...loader, backends: ["numba"], plugins: [plugin] }] };
    const report = buildReport([], facts, { connected: true, focus: ["numba"] });
    expect(report.problems.map((p) => [p.kind, p.op, p.message])).toEqual([
      [
        "missing",
        "PoolLayer",
        "PoolLayer on numba was expected (by /p/package.json) but never registered: the numba backend has not loaded in this thread yet, and the registration module of plug for it runs when it does. Load its dispatch module before asking.",
      ],
    ]);
  });

  it("counts only the backends the loader watches, and notes a plugin's registration module for a backend nothing declares", () => {
    const registrations = { nmuba: "file:///p/numba.js" };
    const plugin = { name: "plug7", declaredIn: "/p/package.json", registrations, expects: { nmuba: ["Pool7"] } };
    const numba = { backend: "numba", module: "file:///fw/numba.js", names: new Set<string>() };
    const facts = { ...noFacts, tables: [numba], loaders: [{ ...loader, backends: ["numba", "jax"], plugins: [plugin] }] };
    const report = buildReport([], facts, { connected: true });
    expect(report.backends.map((b) => b.backend)).toContain("nmuba");
    expect(report.notes).toContain(
      'plug7 declares a registration module for nmuba (did you mean "numba"?), but nothing declares a nmuba backend: it never loads',
    );
    // Two installations (a copy of each version) report the same plugin: one note.
    const twice = { ...facts, loaders: [facts.loaders[0], facts.loaders[0]] as typeof facts.loaders };
    expect(buildReport([], twice, { connected: true }).notes.filter((n) => n.startsWith("plug7 declares"))).toHaveLength(1);
    // nmuba is known from the plugin's expects, not watched: two named backends, one loaded.
    expect(report.notes).toContain("no registrations were made; the loader watched 2 named backends, 1 loaded");
    // Registered in code for a typo of a watched backend: noted; for a backend far from every watched one: not.
    const f = fold([requested(0, "jaxx", "Conv"), requested(1, "tpu", "Conv")]);
    const typo = buildReport([f], { ...facts, loaders: [{ ...loader, backends: ["numba", "jax"] }] }, { connected: true });
    expect(typo.notes.filter((n) => n.includes("no backend the loader watches"))).toEqual([
      'jaxx is no backend the loader watches (did you mean "jax"?); what waits for it waits for good',
    ]);
  });

  it("a loader that watches nothing: no problem beside a table the framework announced, unless plugins declare what it can never serve", () => {
    const table = { backend: "A", module: "file:///fw/a.js", names: new Set<string>() };
    const bare = { ...noFacts, tables: [table], loaders: [{ ...loader, declarations: [] }] };
    expect(buildReport([], bare, { connected: true }).problems).toEqual([]);
    const expecting = {
      ...bare,
      loaders: [
        {
          ...loader,
          declarations: [],
          plugins: [{ name: "p", declaredIn: "/p/package.json", registrations: {}, expects: { B: ["Conv"] } }],
        },
      ],
    };
    expect(buildReport([], expecting, { connected: true }).problems[0]?.message).toContain(
      "found no backend declaration, so it watches nothing",
    );
  });

  it("a dispatch module whose declared export holds no table is a table problem of the thread, once, where its backend is named or wanted", () => {
    const unusable = [{ backend: "gpu", message: 'gpu.js … has no export "tabel"' }];
    const named = { ...noFacts, loaders: [{ ...loader, backends: ["gpu"] }], unusable };
    const report = buildReport([], named, { connected: true });
    expect(report.problems.map((p) => [p.kind, p.backend, p.message])).toEqual([["table", "gpu", unusable[0]?.message]]);
    expect(buildReport([], named, { connected: false }).problems).toEqual([]);
    // Only a pattern matched it (a helper module beside the dispatch modules): a problem once a plugin or the program wants gpu.
    const patterned = { ...noFacts, loaders: [loader], unusable };
    expect(buildReport([], patterned, { connected: true }).problems).toEqual([]);
    const plugin = { name: "p", declaredIn: "/p/package.json", registrations: { gpu: "file:///p/gpu.js" }, expects: {} };
    const wanted = { ...noFacts, loaders: [{ ...loader, plugins: [plugin] }], unusable };
    expect(buildReport([], wanted, { connected: true }).problems.map((p) => p.kind)).toContain("table");
    expect(buildReport([], { ...patterned, asserted: new Set(["gpu"]) }, { connected: true }).problems.map((p) => p.kind)).toContain(
      "table",
    );
  });

  it("a loader that came from an ancestor process and watches nothing: no problem where no backend's table was made or used", () => {
    const helper = { ...noFacts, loaders: [{ ...loader, declarations: [], outside: true }] };
    expect(buildReport([], helper, { connected: true }).problems).toEqual([]);
    // A backend's Dispatcher used there never reached dispatch-hook: the loader was needed.
    const used = { ...helper, unannounced: [{ backend: "cpu", name: "cpu table" }] };
    expect(buildReport([], used, { connected: true }).problems.map((p) => p.kind)).toEqual(["loader"]);
    // Backend sets in package.json stand for tables a process need not have, not for a plugin's backend.
    const sets = { ...noFacts, loaders: [{ ...loader, declarations: [], sets: ["wasm [ml-ops] (/w/package.json)"] }] };
    expect(buildReport([], sets, { connected: true }).problems).toEqual([]);
    const plugin = { name: "p", declaredIn: "/p/package.json", registrations: {}, expects: { B: ["Conv"] } };
    const setsAndPlugin = {
      ...noFacts,
      loaders: [{ ...loader, declarations: [], sets: ["wasm [ml-ops] (/w/package.json)"], plugins: [plugin] }],
    };
    expect(buildReport([], setsAndPlugin, { connected: true }).problems.map((p) => p.kind)).toEqual(["loader"]);
    // The process the loader was started in: nothing to watch is a problem (a loader started in the wrong place).
    expect(buildReport([], { ...helper, loaders: [{ ...loader, declarations: [] }] }, { connected: true }).problems).toHaveLength(1);
  });

  it("reports plugin modules that were missing or did not finish, and writes made outside the registry", () => {
    const info = (plugin: string) => ({ id: plugin, url: "file:///b/cpu.js", backend: "cpu", plugin, module: `file:///${plugin}/cpu.js` });
    const facts: ThreadFacts = {
      ...noFacts,
      windows: [
        { info: info("gone"), state: "missing", outside: [], error: { name: "Error", message: "Cannot find it", code: undefined } },
        { info: info("threw"), state: "failed", outside: [], error: undefined },
        {
          info: info("direct"),
          state: "done",
          outside: [
            { op: "Conv", opType: class Conv {}, replaced: false },
            { op: "Add", opType: class Add {}, replaced: true },
          ],
          error: undefined,
        },
        { info: info("direct"), state: "done", outside: [], error: undefined },
      ],
    };
    const report = buildReport([], facts, { connected: true });
    expect(report.plugins.map((p) => [p.plugin, p.state])).toEqual([
      ["gone", "missing"],
      ["threw", "failed"],
      ["direct", "loaded"],
    ]);
    expect(report.outside.map((w) => [w.op, w.replaced])).toEqual([
      ["Conv", false],
      ["Add", true],
    ]);
    expect(report.problems.map((p) => p.kind)).toEqual(["failed", "failed", "conflict"]);
    expect(report.problems[1]?.message).toContain("did not finish evaluating");
    // No registry made a registration: the note says the entries came from direct writes.
    expect(report.notes).toContain(
      "no registrations were made through a registry (2 entries were written into tables directly, outside it)",
    );
  });

  it("names each registry when a report covers several", () => {
    const report = buildReport([fold([requested(0, "cpu", "A")], "default"), fold([requested(0, "cpu", "B")], "#2")], noFacts, {
      connected: true,
    });
    expect(report.registrations.map((r) => [r.registry, r.op])).toEqual([
      ["default", "A"],
      ["#2", "B"],
    ]);
  });
});
