// Shared by the benchmarks: medians, ratios, interleaved rounds, and the machine they ran on.
import { cpus, totalmem } from "node:os";
import { Bench } from "tinybench";

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * A 95% interval for the median, by resampling (2,000 resamples, a fixed seed so that a run's
 * report does not change when it is printed again): how far the median could be from the one a
 * longer run would find, on a machine this noisy.
 */
export function medianInterval(values, resamples = 2000) {
  let seed = 0x2545f491;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const medians = [];
  for (let i = 0; i < resamples; i++) medians.push(median(values.map(() => values[Math.floor(random() * values.length)])));
  medians.sort((a, b) => a - b);
  return [medians[Math.floor(resamples * 0.025)], medians[Math.ceil(resamples * 0.975) - 1]];
}

export function machine() {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}`;
}

export const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));

/** A markdown table from a header and rows. */
export function table(header, rows) {
  return [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

/**
 * Runs contenders (each doing `callsPerTask` calls) side by side, in rounds that alternate their
 * order so no contender always runs first or last; returns each one's median ns per call.
 */
export async function interleaved(contenders, { rounds, time, callsPerTask }) {
  const perCall = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    const names = Object.keys(contenders);
    if (r % 2) names.reverse();
    const bench = new Bench({ time, warmupTime: 50 });
    for (const name of names) bench.add(name, contenders[name]);
    await bench.run();
    for (const task of bench.tasks) perCall[task.name].push((task.result.latency.p50 * 1e6) / callsPerTask);
  }
  return Object.fromEntries(Object.entries(perCall).map(([name, samples]) => [name, median(samples)]));
}
