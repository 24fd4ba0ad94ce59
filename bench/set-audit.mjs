// What reading a backend set's audit costs for its lazily named implementations: the set resolves
// each one's module (none of its code runs) every time its audit is read. Two sets alike, each with
// 300 lazy implementations in 10 modules; the second has the check left out. verify() of each, in
// alternate rounds; medians and their ratio. node bench/set-audit.mjs [rounds]
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBackends, dispatchable } from "../dist/index.js";
import { fmt, machine, median } from "./lib.mjs";

const dir = mkdtempSync(join(tmpdir(), "dispatch-hook-set-audit-"));
mkdirSync(join(dir, "impls"));
for (let m = 0; m < 10; m++) writeFileSync(join(dir, "impls", `m${m}.cjs`), "exports.f = () => 0;\n");
class Arr {}
const implementations = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`f${i}`, `./impls/m${i % 10}.cjs#f`]));
function makeSet(name) {
  const set = createBackends({ name, discover: false });
  set.declare({ name: "fast", primaryTypes: [Arr], implementations, base: dir });
  for (let i = 0; i < 300; i++) dispatchable((x) => x, { name: `f${i}`, args: [0], backends: set });
  return set;
}
const checked = makeSet("checked");
const unchecked = makeSet("unchecked");
unchecked.registry.reportWith(() => []);

const rounds = Number(process.argv[2] ?? 41);
const time = (set) => {
  const start = process.hrtime.bigint();
  const report = set.registry.verify();
  if (!report.ok) throw new Error("the bench's sets must be ok");
  return Number(process.hrtime.bigint() - start) / 1e6;
};
const on = [];
const off = [];
for (let r = 0; r < rounds; r++) {
  on.push(time(checked));
  off.push(time(unchecked));
}
const a = median(on);
const b = median(off);
console.log(machine());
console.log(`verify() of a set with 300 lazy implementations (10 modules), ${rounds} rounds alternated:`);
console.log(`  with the check: ${fmt(a, 3)} ms; without: ${fmt(b, 3)} ms; ratio ${fmt(a / b, 3)}×; the check: ${fmt(a - b, 3)} ms a read`);
