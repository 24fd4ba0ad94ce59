// Dispatchable functions against the hand-written instanceof chain they replace: one and two
// relevant arguments on the cached path, the same with scoped options active, rows that show what
// each tier and cache buys, and the first call for a new type tuple on its own. Contenders run side
// by side in one process, interleaved by rounds; each figure is the median of the rounds' per-call
// times. runDispatchableBenches() runs it twice: in this process, and in a child process under
// --disallow-code-generation-from-strings, where no front is compiled.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { backendOptions, createBackends, dispatchable } from "../dist/index.js";
import { fmt, interleaved, median, table } from "./lib.mjs";

class NdArray {
  constructor(v) {
    this.v = v;
  }
}
class JaxArray {
  constructor(v) {
    this.v = v;
  }
}
class CupyArray {
  constructor(v) {
    this.v = v;
  }
}
const reference1 = (x) => x.v + 1;
const jax1 = (x) => x.v + 2;
const cupy1 = (x) => x.v + 3;
const reference2 = (x, y) => x.v + y.v;
const jax2 = (x, y) => x.v - y.v;
const cupy2 = (x, y) => x.v * y.v;

// What a library writes by hand: an isinstance chain per function.
function hand1(x) {
  if (x instanceof JaxArray) return jax1(x);
  if (x instanceof CupyArray) return cupy1(x);
  return reference1(x);
}
function hand2(x, y) {
  if (x instanceof JaxArray && y instanceof JaxArray) return jax2(x, y);
  if (x instanceof CupyArray && y instanceof CupyArray) return cupy2(x, y);
  return reference2(x, y);
}

// A number: the default's, as a hand-written chain tests it first.
const referenceNumber = (x) => x + 1;
function handNumber(x) {
  if (typeof x === "number") return referenceNumber(x);
  return hand1(x);
}
// A function with no array argument, for a type given with like() (NumPy's like=).
const referenceArange = (k) => k;
const jaxArange = (k) => k + 1;

const backends = createBackends({ name: "bench", discover: false, env: {} });
backends.declare({ name: "jax", primaryTypes: [JaxArray], implementations: { one: jax1, two: jax2, number: jax1, arange: jaxArange } });
backends.declare({ name: "cupy", primaryTypes: [CupyArray], implementations: { one: cupy1, two: cupy2 } });
const one = dispatchable(reference1, { name: "one", args: [0], backends });
const two = dispatchable(reference2, { name: "two", args: [0, 1], backends });
// The mixed-types row has a dispatchable of its own: V8 keeps type feedback per function, so a
// function that sees three classes is measured there, and the rows above stay monomorphic.
const oneMixed = dispatchable(reference1, { name: "one", args: [0], backends });
// Six types taking turns, more than the compiled chain's width (four): the fast path answers.
const oneWide = dispatchable(reference1, { name: "one", args: [0], backends });
// Relevant arguments picked by a function: no fast path, the general path's cache answers (what
// the fast path buys). A set of its own: a set has one function per name, with one way to pick its arguments.
const pickedSet = createBackends({ name: "bench-picked", discover: false, env: {} });
pickedSet.declare({ name: "jax", primaryTypes: [JaxArray], implementations: { one: jax1 } });
pickedSet.declare({ name: "cupy", primaryTypes: [CupyArray], implementations: { one: cupy1 } });
const onePicked = dispatchable(reference1, { name: "one", args: (x) => [x], backends: pickedSet });
const number = dispatchable(referenceNumber, { name: "number", args: [0], backends });
// Values a protocol decides (objects marked by a property, half of them): a set of their own, so
// that the rows above keep their classes decided by class.
const Marked = { [Symbol.hasInstance]: (v) => typeof v === "object" && v !== null && v.marked === true };
const protocolSet = createBackends({ name: "bench-protocol", discover: false, env: {} });
protocolSet.declare({ name: "marked", primaryTypes: [Marked], implementations: { one: jax1 } });
const oneProtocol = dispatchable(reference1, { name: "one", args: [0], backends: protocolSet });
function handProtocol(x) {
  if (x instanceof Marked) return jax1(x);
  return reference1(x);
}
const arange = dispatchable(referenceArange, { name: "arange", args: [], backends });
const arangeJax = arange.like(JaxArray);

const n = 1024;
const jaxes = Array.from({ length: n }, (_, i) => new JaxArray(i));
// A stream of mixed types: every call's types differ from the call before (the per-tuple cache).
const kinds = [NdArray, JaxArray, CupyArray];
const mixed = Array.from({ length: n }, (_, i) => new kinds[i % 3](i));
class JaxArray2 extends JaxArray {}
class CupyArray2 extends CupyArray {}
class NdArray2 extends NdArray {}
const wideKinds = [...kinds, NdArray2, JaxArray2, CupyArray2];
const wide = Array.from({ length: n }, (_, i) => new wideKinds[i % 6](i));
const marked = Array.from({ length: n }, (_, i) => (i % 2 ? { v: i, marked: true } : { v: i }));

let sink = 0;
const scoped = { prioritize: ["cupy"] };
// Every contender has a loop of its own, written out: V8 keeps type feedback per call site, and a
// loop shared by contenders would see every function it calls and inline none of them.

// Outside every scope, with no scope alive: a dispatchable does not look at scopes at all.
const plain = {
  "1 arg, hand-written": () => {
    let s = 0;
    for (const x of jaxes) s += hand1(x);
    sink += s;
  },
  "1 arg, dispatchable": () => {
    let s = 0;
    for (const x of jaxes) s += one(x);
    sink += s;
  },
  "2 args, hand-written": () => {
    let s = 0;
    for (const x of jaxes) s += hand2(x, x);
    sink += s;
  },
  "2 args, dispatchable": () => {
    let s = 0;
    for (const x of jaxes) s += two(x, x);
    sink += s;
  },
  "1 arg, mixed types, hand-written": () => {
    let s = 0;
    for (const x of mixed) s += hand1(x);
    sink += s;
  },
  "1 arg, mixed types, dispatchable": () => {
    let s = 0;
    for (const x of mixed) s += oneMixed(x);
    sink += s;
  },
  "1 arg, six types in turn, hand-written": () => {
    let s = 0;
    for (const x of wide) s += hand1(x);
    sink += s;
  },
  "1 arg, six types in turn, dispatchable": () => {
    let s = 0;
    for (const x of wide) s += oneWide(x);
    sink += s;
  },
  "1 arg, a number, hand-written": () => {
    let s = 0;
    for (let i = 0; i < n; i++) s += handNumber(i);
    sink += s;
  },
  "1 arg, a number, dispatchable": () => {
    let s = 0;
    for (let i = 0; i < n; i++) s += number(i);
    sink += s;
  },
  "1 arg, general path only (args picked by a function), hand-written": () => {
    let s = 0;
    for (const x of jaxes) s += hand1(x);
    sink += s;
  },
  "1 arg, general path only (args picked by a function), dispatchable": () => {
    let s = 0;
    for (const x of jaxes) s += onePicked(x);
    sink += s;
  },
  "1 arg, a value decided by a protocol, hand-written": () => {
    let s = 0;
    for (const x of marked) s += handProtocol(x);
    sink += s;
  },
  "1 arg, a value decided by a protocol, dispatchable": () => {
    let s = 0;
    for (const x of marked) s += oneProtocol(x);
    sink += s;
  },
  "no array argument, type given with like(), hand-written": () => {
    let s = 0;
    for (let i = 0; i < n; i++) s += jaxArange(i);
    sink += s;
  },
  "no array argument, type given with like(), dispatchable": () => {
    let s = 0;
    for (let i = 0; i < n; i++) s += arangeJax(i);
    sink += s;
  },
};
// Inside backendOptions(): in its callback's synchronous part, and after an await in it.
const inScope = {
  "1 arg, scoped options, hand-written": () =>
    backendOptions(scoped, () => {
      let s = 0;
      for (const x of jaxes) s += hand1(x);
      sink += s;
    }),
  "1 arg, scoped options, dispatchable": () =>
    backendOptions(scoped, () => {
      let s = 0;
      for (const x of jaxes) s += one(x);
      sink += s;
    }),
  "2 args, scoped options, hand-written": () =>
    backendOptions(scoped, () => {
      let s = 0;
      for (const x of jaxes) s += hand2(x, x);
      sink += s;
    }),
  "2 args, scoped options, dispatchable": () =>
    backendOptions(scoped, () => {
      let s = 0;
      for (const x of jaxes) s += two(x, x);
      sink += s;
    }),
  "1 arg, scoped options, after an await, hand-written": () =>
    backendOptions(scoped, async () => {
      await null;
      let s = 0;
      for (const x of jaxes) s += hand1(x);
      sink += s;
    }),
  "1 arg, scoped options, after an await, dispatchable": () =>
    backendOptions(scoped, async () => {
      await null;
      let s = 0;
      for (const x of jaxes) s += one(x);
      sink += s;
    }),
  // A scope entered for every call (a request handler's): scopes with equal options share one
  // key, and so the decisions made under it.
  "1 arg, a new scope per call (equal options), hand-written": () => {
    let s = 0;
    for (const x of jaxes) s += backendOptions(scoped, () => hand1(x));
    sink += s;
  },
  "1 arg, a new scope per call (equal options), dispatchable": () => {
    let s = 0;
    for (const x of jaxes) s += backendOptions(scoped, () => one(x));
    sink += s;
  },
};
// Outside scopes while another request's scope is alive (an await pending in it): every call asks
// the AsyncLocalStorage.
const besideScope = {
  "1 arg, outside scopes, a scope alive elsewhere, hand-written": () => {
    let s = 0;
    for (const x of jaxes) s += hand1(x);
    sink += s;
  },
  "1 arg, outside scopes, a scope alive elsewhere, dispatchable": () => {
    let s = 0;
    for (const x of jaxes) s += one(x);
    sink += s;
  },
};

const pairsOf = (ns) =>
  [...new Set(Object.keys(ns).map((k) => k.replace(/, (hand-written|dispatchable)$/, "")))].map((name) => ({
    name,
    hand: ns[`${name}, hand-written`],
    ours: ns[`${name}, dispatchable`],
    ratio: ns[`${name}, dispatchable`] / ns[`${name}, hand-written`],
  }));

export async function runDispatchableBench({ rounds = 7, time = 150 } = {}) {
  const options = { rounds, time, callsPerTask: n };
  // The plain rows first: no scope has been entered yet in this process.
  const pairs = pairsOf(await interleaved(plain, options));
  pairs.push(...pairsOf(await interleaved(inScope, options)));
  let release;
  const gate = new Promise((resolve) => {
    release = resolve;
  });
  const pending = backendOptions(scoped, async () => {
    await gate;
  });
  pairs.push(...pairsOf(await interleaved(besideScope, options)));
  release();
  await pending;

  // A class never seen (a subclass of one no backend declares): its class index is one already
  // decided, so no decision is made and nothing is kept for it.
  const newClass = [];
  // The first call of a dispatchable: the decision is made (the plan: every backend asked) and
  // cached, which is what the caches save every later call.
  const firstCall = [];
  for (let r = 0; r < rounds; r++) {
    const fresh = Array.from({ length: 5000 }, (_, i) => new ({ [`Fresh${r}_${i}`]: class extends NdArray {} })[`Fresh${r}_${i}`](i));
    let start = process.hrtime.bigint();
    let s = 0;
    for (const x of fresh) s += oneMixed(x);
    newClass.push(Number(process.hrtime.bigint() - start) / fresh.length);
    const functions = Array.from({ length: 1000 }, () => dispatchable(reference1, { name: "one", args: [0], backends }));
    start = process.hrtime.bigint();
    for (const f of functions) s += f(jaxes[0]);
    firstCall.push(Number(process.hrtime.bigint() - start) / functions.length);
    sink += s;
  }
  if (sink === 42) console.log("");
  return { pairs, newClassNs: median(newClass), firstCallNs: median(firstCall) };
}

/** Both runs: here, and in a child process without generated code. Pairs gain `noCodegen` and `noCodegenRatio`. */
export async function runDispatchableBenches(options = {}) {
  const here = await runDispatchableBench(options);
  const child = JSON.parse(
    execFileSync(
      process.execPath,
      ["--disallow-code-generation-from-strings", fileURLToPath(import.meta.url), "--json", JSON.stringify(options)],
      { encoding: "utf8", maxBuffer: 2 ** 24 },
    ),
  );
  for (const p of here.pairs) {
    const other = child.pairs.find((c) => c.name === p.name);
    p.noCodegen = other?.ours;
    p.noCodegenHand = other?.hand;
    p.noCodegenRatio = other?.ratio;
  }
  return { ...here, noCodegenFirstCallNs: child.firstCallNs, noCodegenNewClassNs: child.newClassNs };
}

/** The rows whose target is 2× the hand-written chain: the dispatch itself, in and out of scopes. */
const targetRows = [
  "1 arg",
  "2 args",
  "1 arg, mixed types",
  "1 arg, six types in turn",
  "1 arg, scoped options",
  "2 args, scoped options",
  "1 arg, scoped options, after an await",
  "1 arg, outside scopes, a scope alive elsewhere",
];

/** Section 5 of bench/RESULTS.md, from runDispatchableBenches(). */
export function dispatchableSection(result) {
  const verdict = (ok) => (ok ? "met" : "**missed**");
  const main = result.pairs.filter((p) => targetRows.includes(p.name));
  const within = (key, limit) => main.filter((p) => p[key] <= limit).length;
  return [
    "## 5. Dispatchable functions",
    'A function with a default and two backends (jax-like, cupy-like), called with one or two relevant arguments, against the hand-written `instanceof` chain it replaces (1,024 calls per sample, each contender with a loop of its own; implementations return a number, so the figures are the dispatch itself). "Mixed types": every call\'s type differs from the one before, in a dispatchable of its own (V8 keeps type feedback per function); "six types in turn": more classes than the compiled chain tries. "Scoped options": the calls run inside `backendOptions({ prioritize: ["cupy"] })`, in its callback\'s synchronous part, or after an `await` in it. "A scope alive elsewhere": calls outside any scope while another task\'s scope waits on an await. Each row is measured twice, side by side with its own hand-written chain: in a normal process (the compiled front answers), and in one started with `--disallow-code-generation-from-strings` (the fast path answers, no code generated). The first eight rows are the dispatch itself; the rows in italics show what each tier and cache buys.',
    table(
      [
        "case",
        "hand-written (ns/call)",
        "dispatchable (ns/call)",
        "ratio",
        "hand-written, no generated code",
        "dispatchable, no generated code",
        "ratio",
      ],
      [...main, ...result.pairs.filter((p) => !targetRows.includes(p.name))].map((p) => [
        main.includes(p) ? p.name : `*${p.name}*`,
        fmt(p.hand),
        fmt(p.ours),
        `${fmt(p.ratio)}×`,
        fmt(p.noCodegenHand),
        fmt(p.noCodegen),
        `${fmt(p.noCodegenRatio)}×`,
      ]),
    ),
    `- A call with a class never seen (a subclass no backend declares): ${fmt(result.newClassNs)} ns (no generated code: ${fmt(result.noCodegenNewClassNs)} ns); its class index was decided already, so nothing is decided or kept for it.`,
    `- The first call of a dispatchable (every backend asked, the decision cached): ${fmt(result.firstCallNs)} ns (no generated code: ${fmt(result.noCodegenFirstCallNs)} ns, the decision alone; with generated code it includes compiling the front). Every later call with the same class index skips it: what the decision caches buy.`,
    `- What the compiled front buys: the two dispatchable columns. What the fast path buys: "general path only" against "1 arg". A number goes through the classifier (a call, no index of its own): "a number". What keeping a protocol's decisions by its answers buys: "a value decided by a protocol" (planned again on every call before, 710 ns). What sharing a scope key buys: "a new scope per call" decides nothing after the first call. "like()" calls take the general path on every call, with the stand-in per class cached.`,
    `- Target: the first ${main.length} rows within 2× of the chain: ${within("ratio", 2)} of ${main.length} with generated code — ${verdict(within("ratio", 2) === main.length)}; ${within("noCodegenRatio", 2)} of ${main.length} without — ${verdict(within("noCodegenRatio", 2) === main.length)}. Without generated code within 1.5× everywhere (which would retire the front): ${within("noCodegenRatio", 1.5)} of ${main.length} — ${verdict(within("noCodegenRatio", 1.5) === main.length)}, so the front stays.`,
  ].join("\n\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const json = process.argv[2] === "--json";
  const result = json ? await runDispatchableBench(JSON.parse(process.argv[3] ?? "{}")) : await runDispatchableBenches();
  if (json) console.log(JSON.stringify(result));
  else {
    for (const p of result.pairs)
      console.log(
        `${p.name.padEnd(66)} hand ${fmt(p.hand)} ns  dispatchable ${fmt(p.ours)} ns  ${fmt(p.ratio)}×  no generated code ${fmt(p.noCodegen)} ns  ${fmt(p.noCodegenRatio)}×`,
      );
    console.log(`a class never seen: ${fmt(result.newClassNs)} ns (no generated code: ${fmt(result.noCodegenNewClassNs)} ns)`);
    console.log(
      `the first call of a dispatchable: ${fmt(result.firstCallNs)} ns (no generated code: ${fmt(result.noCodegenFirstCallNs)} ns)`,
    );
  }
}
