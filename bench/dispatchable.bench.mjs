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

const n = 1024;
const jaxes = Array.from({ length: n }, (_, i) => new JaxArray(i));
// A stream of mixed types: every call's types differ from the call before (the per-tuple cache).
const kinds = [NdArray, JaxArray, CupyArray];
const mixed = Array.from({ length: n }, (_, i) => new kinds[i % 3](i));

let sink = 0;
const contenders = {
  "1 arg, hand-written": () => {
    for (const x of jaxes) sink += hand1(x);
  },
  "1 arg, dispatchable": () => {
    for (const x of jaxes) sink += one(x);
  },
  "2 args, hand-written": () => {
    for (const x of jaxes) sink += hand2(x, x);
  },
  "2 args, dispatchable": () => {
    for (const x of jaxes) sink += two(x, x);
  },
  "1 arg, mixed types, hand-written": () => {
    for (const x of mixed) sink += hand1(x);
  },
  "1 arg, mixed types, dispatchable": () => {
    for (const x of mixed) sink += one(x);
  },
  "1 arg, scoped options, hand-written": () => {
    backendOptions({ prioritize: ["cupy"] }, () => {
      for (const x of jaxes) sink += hand1(x);
    });
  },
  "1 arg, scoped options, dispatchable": () => {
    backendOptions({ prioritize: ["cupy"] }, () => {
      for (const x of jaxes) sink += one(x);
    });
  },
  "2 args, scoped options, hand-written": () => {
    backendOptions({ prioritize: ["cupy"] }, () => {
      for (const x of jaxes) sink += hand2(x, x);
    });
  },
  "2 args, scoped options, dispatchable": () => {
    backendOptions({ prioritize: ["cupy"] }, () => {
      for (const x of jaxes) sink += two(x, x);
    });
  },
};

export async function runDispatchableBench({ rounds = 7, time = 150 } = {}) {
  const ns = await interleaved(contenders, { rounds, time, callsPerTask: n });
  const pairs = ["1 arg", "2 args", "1 arg, mixed types", "1 arg, scoped options", "2 args, scoped options"].map((name) => ({
    name,
    hand: ns[`${name}, hand-written`],
    ours: ns[`${name}, dispatchable`],
    ratio: ns[`${name}, dispatchable`] / ns[`${name}, hand-written`],
  }));

  // The first call for a new type tuple: a class never seen, so the decision is made and cached.
  const firsts = [];
  for (let r = 0; r < rounds; r++) {
    const fresh = Array.from({ length: 5000 }, (_, i) => new ({ [`Fresh${r}_${i}`]: class extends NdArray {} })[`Fresh${r}_${i}`](i));
    const start = process.hrtime.bigint();
    for (const x of fresh) sink += one(x);
    firsts.push(Number(process.hrtime.bigint() - start) / fresh.length);
  }
  if (sink === 42) console.log("");
  return { pairs, firstCallNs: median(firsts) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runDispatchableBench();
  for (const p of result.pairs)
    console.log(`${p.name.padEnd(26)} hand ${fmt(p.hand)} ns  dispatchable ${fmt(p.ours)} ns  ${fmt(p.ratio)}×`);
  console.log(`first call for a new type tuple: ${fmt(result.firstCallNs)} ns`);
}
