// The dispatch hot path: resolve and call, for instances of 16 op classes in hierarchies up to
// depth 4, on a warm cache. Contenders run side by side in one process, interleaved by rounds, and
// each figure is the median of the rounds' per-call times.
import multimethod from "@arrows/multimethod";
import typed from "typed-function";
import { Dispatcher } from "../dist/index.js";
import { fmt, interleaved, median } from "./lib.mjs";

const { multi, method } = multimethod;

// Four hierarchies, each Base → Mid → Leaf → Deep (depth 4): 16 classes.
const classes = [];
for (let h = 0; h < 4; h++) {
  const Base = { [`Base${h}`]: class {} }[`Base${h}`];
  const Mid = { [`Mid${h}`]: class extends Base {} }[`Mid${h}`];
  const Leaf = { [`Leaf${h}`]: class extends Mid {} }[`Leaf${h}`];
  const Deep = { [`Deep${h}`]: class extends Leaf {} }[`Deep${h}`];
  classes.push(Base, Mid, Leaf, Deep);
}
const impls = classes.map((_, i) => () => i);
const instances = Array.from({ length: 1024 }, (_, i) => new classes[(i * 7) % 16]());

// Floor: every class registered directly, one Map lookup by constructor.
const raw = new Map(classes.map((c, i) => [c, impls[i]]));
// The same lookup keyed by each value's prototype: what a resolution that a lying or inherited
// `constructor` property cannot fool must read at the least (the Dispatcher's cache is keyed so).
const byProto = new Map(classes.map((c, i) => [c.prototype, impls[i]]));
// A hand-written instanceof chain, most specific first.
const chain = [...classes].reverse();
const chainImpls = [...impls].reverse();
function byInstanceof(x) {
  for (let i = 0; i < chain.length; i++) if (x instanceof chain[i]) return chainImpls[i];
  throw new Error("miss");
}
// Our Dispatcher: only the bases and leaves registered, so resolution walks the chain (cached after).
const dispatcher = new Dispatcher({ name: "bench" });
classes.forEach((c, i) => {
  if (i % 4 === 0 || i % 4 === 2) dispatcher.register(c, impls[i]);
});
const mm = multi(...chain.map((c, i) => method(c, chainImpls[i])));
const t = typed.create();
for (const c of classes) t.addType({ name: c.name, test: (x) => x instanceof c });
const typedFn = t("bench", Object.fromEntries(chain.map((c, i) => [c.name, chainImpls[i]])));

let sink = 0;
const contenders = {
  "Map.get(x.constructor)": () => {
    for (const x of instances) sink += raw.get(x.constructor)(x);
  },
  "Map.get(getPrototypeOf(x))": () => {
    for (const x of instances) sink += byProto.get(Object.getPrototypeOf(x))(x);
  },
  "instanceof chain": () => {
    for (const x of instances) sink += byInstanceof(x)(x);
  },
  Dispatcher: () => {
    for (const x of instances) sink += dispatcher.resolve(x)(x);
  },
  "@arrows/multimethod": () => {
    for (const x of instances) sink += mm(x);
  },
  "typed-function": () => {
    for (const x of instances) sink += typedFn(x);
  },
};

export async function runDispatchBench({ rounds = 7, time = 150 } = {}) {
  const ns = await interleaved(contenders, { rounds, time, callsPerTask: instances.length });
  const rows = Object.entries(ns).map(([name, perCall]) => ({ name, ns: perCall }));
  const floor = rows[0].ns;
  for (const row of rows) row.ratio = row.ns / floor;

  // The uncached path: every resolution is the first for its class.
  const fresh = Array.from({ length: 20000 }, (_, i) => {
    const Base = classes[(i % 4) * 4 + 3];
    return new { [`Fresh${i}`]: class extends Base {} }[`Fresh${i}`]();
  });
  const uncached = [];
  for (let r = 0; r < rounds; r++) {
    const d = new Dispatcher({ name: "uncached" });
    classes.forEach((c, i) => {
      if (i % 4 === 0) d.register(c, impls[i]);
    });
    const start = process.hrtime.bigint();
    for (const x of fresh) sink += d.resolve(x)(x);
    uncached.push(Number(process.hrtime.bigint() - start) / fresh.length);
  }
  // The first call after a register: the cache is cleared, one walk refills it.
  class Extra {}
  const afterRegister = [];
  for (let r = 0; r < rounds; r++) {
    const samples = [];
    for (let i = 0; i < 2000; i++) {
      dispatcher.register(Extra, impls[0]);
      const start = process.hrtime.bigint();
      sink += dispatcher.resolve(instances[i % instances.length])(0);
      samples.push(Number(process.hrtime.bigint() - start));
      dispatcher.unregister(Extra);
    }
    afterRegister.push(median(samples));
  }
  if (sink === 42) console.log("");
  return { rows, uncachedNs: median(uncached), afterRegisterNs: median(afterRegister), floor };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runDispatchBench();
  for (const row of result.rows) console.log(`${row.name.padEnd(24)} ${fmt(row.ns)} ns/call  ${fmt(row.ratio)}×`);
  console.log(`uncached resolve ${fmt(result.uncachedNs)} ns; first call after register ${fmt(result.afterRegisterNs)} ns`);
}
