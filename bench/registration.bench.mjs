// Registration and audit: 10,000 op types registered while their backend is missing, then the
// table provided; per-registration cost includes its audit record. Then the memory an audit log
// holds after 100,000 events. Run with --expose-gc for the memory figure.

import util from "node:util";
import { createRegistry, Dispatcher } from "../dist/index.js";
import { median } from "./lib.mjs";

const N = 10_000;
const classes = Array.from({ length: N }, (_, i) => ({ [`Op${i}`]: class {} })[`Op${i}`]);
const impl = () => 0;

function once(callSites) {
  const registry = createRegistry({ callSites });
  const t0 = process.hrtime.bigint();
  for (const type of classes) registry.register("numba", type, impl);
  const t1 = process.hrtime.bigint();
  registry.provide("numba", new Dispatcher({ backend: "numba" }));
  const t2 = process.hrtime.bigint();
  return { register: Number(t1 - t0) / N, provide: Number(t2 - t1) / N, total: Number(t2 - t0) / N };
}

/** The floor: what V8 charges for the first use of 10,000 fresh classes (and their prototypes) as Map keys. */
function freshKeyFloor() {
  const fresh = Array.from({ length: N }, (_, i) => ({ [`Fresh${i}`]: class {} })[`Fresh${i}`]);
  const a = new Map();
  const b = new Map();
  const t0 = process.hrtime.bigint();
  for (const type of fresh) {
    a.set(type, impl);
    b.set(type.prototype, impl);
  }
  return Number(process.hrtime.bigint() - t0) / N;
}

/**
 * The ways to record a call site, side by side, per capture: the default capture (10 frames), the
 * capture limited to the one frame needed (what the registry does), util.getCallSites where Node has
 * it, and none. Each runs from the same depth of stack, as a registration does.
 */
function captureVariants(rounds) {
  const sink = [];
  const variants = {
    "captureStackTrace, 10 frames": () => {
      const holder = {};
      Error.captureStackTrace(holder, captureVariants);
      return holder;
    },
    "captureStackTrace, 1 frame (used)": () => {
      const holder = {};
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 1;
      Error.captureStackTrace(holder, captureVariants);
      Error.stackTraceLimit = limit;
      return holder;
    },
    ...(typeof util.getCallSites === "function" ? { "util.getCallSites(2)": () => util.getCallSites(2) } : {}),
    none: () => ({}),
  };
  const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const n = 20_000;
  for (let r = 0; r < rounds; r++) {
    const names = Object.keys(variants);
    if (r % 2) names.reverse();
    for (const name of names) {
      const capture = variants[name];
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        sink.push(capture());
        if (sink.length > 1000) sink.length = 0;
      }
      samples[name].push(Number(process.hrtime.bigint() - t0) / n);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

/** 10,000 registrations of 40 op types over 250 backends: op types reused, as plugins do. */
const reused = classes.slice(0, 40);
function reusedTypes() {
  const registry = createRegistry({ callSites: false });
  const t0 = process.hrtime.bigint();
  for (let b = 0; b < 250; b++) for (const type of reused) registry.register(`b${b}`, type, impl);
  for (let b = 0; b < 250; b++) registry.provide(`b${b}`, new Dispatcher({ backend: `b${b}` }));
  return Number(process.hrtime.bigint() - t0) / N;
}

/** The same 10,000 registrations into tables that exist already: registration alone, tables made beforehand. */
function intoExistingTables() {
  const registry = createRegistry({ callSites: false });
  for (let b = 0; b < 250; b++) registry.provide(`b${b}`, new Dispatcher({ backend: `b${b}` }));
  const t0 = process.hrtime.bigint();
  for (let b = 0; b < 250; b++) for (const type of reused) registry.register(`b${b}`, type, impl);
  return Number(process.hrtime.bigint() - t0) / N;
}

export function runRegistrationBench({ rounds = 9 } = {}) {
  const floor = [];
  const reuse = [];
  const into = [];
  const results = {};
  for (const callSites of [true, false])
    results[callSites ? "with call sites" : "without call sites"] = { register: [], provide: [], total: [] };
  for (let r = 0; r < rounds; r++) {
    // Alternate which configuration goes first.
    for (const callSites of r % 2 ? [false, true] : [true, false]) {
      const sample = once(callSites);
      const bucket = results[callSites ? "with call sites" : "without call sites"];
      for (const key of ["register", "provide", "total"]) bucket[key].push(sample[key]);
    }
    floor.push(freshKeyFloor());
    reuse.push(reusedTypes());
    into.push(intoExistingTables());
  }
  const out = {};
  for (const [name, bucket] of Object.entries(results)) {
    out[name] = { register: median(bucket.register), provide: median(bucket.provide), total: median(bucket.total) };
  }

  // Memory held by the audit log after 100,000 events (register + provide + apply + dispose).
  let memory;
  if (typeof globalThis.gc === "function") {
    const samples = [];
    for (let r = 0; r < 3; r++) {
      globalThis.gc();
      const before = process.memoryUsage().heapUsed;
      const registry = createRegistry();
      const table = new Map();
      registry.provide("numba", table);
      let events = registry.audit.size;
      const handles = [];
      for (let i = 0; events < 100_000; i++) {
        handles.push(registry.register("numba", classes[i % N], impl));
        if (handles.length === N) for (const h of handles.splice(0)) h.dispose();
        events = registry.audit.size;
      }
      for (const h of handles) h.dispose();
      globalThis.gc();
      samples.push({ bytes: process.memoryUsage().heapUsed - before, events: registry.audit.size, keep: registry });
    }
    const bytes = median(samples.map((s) => s.bytes));
    memory = { bytes, events: samples[0].events, perEvent: bytes / samples[0].events };
  }
  // Reused op types with call sites on (the default), beside the same without.
  const reuseWithSites = [];
  for (let r = 0; r < rounds; r++) {
    const registry = createRegistry();
    const t0 = process.hrtime.bigint();
    for (let b = 0; b < 250; b++) for (const type of reused) registry.register(`b${b}`, type, impl);
    for (let b = 0; b < 250; b++) registry.provide(`b${b}`, new Dispatcher({ backend: `b${b}` }));
    reuseWithSites.push(Number(process.hrtime.bigint() - t0) / N);
  }
  return {
    perRegistrationNs: out,
    freshKeyFloorNs: median(floor),
    reusedTypesNs: median(reuse),
    intoExistingTablesNs: median(into),
    reusedTypesWithSitesNs: median(reuseWithSites),
    captureNs: captureVariants(rounds),
    memory,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === "--into") {
    // Registering into existing tables alone, in a process of its own (nothing else allocating beside
    // it, which moves the figure by a microsecond): 40 rounds, the first 10 left out as warm-up.
    const samples = Array.from({ length: 40 }, () => intoExistingTables()).slice(10);
    console.log(JSON.stringify({ intoExistingTablesNs: median(samples) }));
  } else console.log(JSON.stringify(runRegistrationBench(), null, 2));
}
