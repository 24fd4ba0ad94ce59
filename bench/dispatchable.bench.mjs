// Dispatchable functions against the hand-written instanceof chain they replace: one and two
// relevant arguments on the cached path, the same with scoped options active, and the first call for
// a new type tuple on its own. Contenders run side by side in one process, interleaved by rounds;
// each figure is the median of the rounds' per-call times.
import { backendOptions, createBackends, dispatchable } from "../dist/index.js";
import { fmt, interleaved, median } from "./lib.mjs";

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

const backends = createBackends({ name: "bench", discover: false, env: {} });
backends.declare({ name: "jax", primaryTypes: [JaxArray], implementations: { one: jax1, two: jax2 } });
backends.declare({ name: "cupy", primaryTypes: [CupyArray], implementations: { one: cupy1, two: cupy2 } });
const one = dispatchable(reference1, { name: "one", args: [0], backends });
const two = dispatchable(reference2, { name: "two", args: [0, 1], backends });
// The mixed-types row has a dispatchable of its own: V8 keeps type feedback per function, so a
// function that sees three classes is measured there, and the rows above stay monomorphic.
const oneMixed = dispatchable(reference1, { name: "one", args: [0], backends });
// More types taking turns than a dispatchable remembers (four): every call takes the general path.
const oneWide = dispatchable(reference1, { name: "one", args: [0], backends });

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

  // The first call for a new type tuple: a class never seen, so the decision is made and cached.
  const firsts = [];
  for (let r = 0; r < rounds; r++) {
    const fresh = Array.from({ length: 5000 }, (_, i) => new ({ [`Fresh${r}_${i}`]: class extends NdArray {} })[`Fresh${r}_${i}`](i));
    const start = process.hrtime.bigint();
    let s = 0;
    for (const x of fresh) s += oneMixed(x);
    sink += s;
    firsts.push(Number(process.hrtime.bigint() - start) / fresh.length);
  }
  if (sink === 42) console.log("");
  return { pairs, firstCallNs: median(firsts) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runDispatchableBench();
  for (const p of result.pairs)
    console.log(`${p.name.padEnd(48)} hand ${fmt(p.hand)} ns  dispatchable ${fmt(p.ours)} ns  ${fmt(p.ratio)}×`);
  console.log(`first call for a new type tuple: ${fmt(result.firstCallNs)} ns`);
}
