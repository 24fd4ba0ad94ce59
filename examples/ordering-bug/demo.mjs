// npm run demo: the ordering bug and its fix, side by side. Each scenario runs in its own process,
// exactly as a user would run it; the demo checks that each behaved as it should.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const bold = (text) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[1m${text}\x1b[22m` : text);

function scenario(title, args, expect, cwd = here) {
  console.log(`\n${bold(`━━ ${title}`)}`);
  console.log(`$ node ${args.join(" ")}\n`);
  const result = spawnSync(process.execPath, args, { cwd, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
  const out = result.stdout.trimEnd();
  // Node's own footer ("Node.js v20…") adds nothing here.
  const err = result.stderr.replace(/\n*Node\.js v[\d.]+\s*$/, "").trimEnd();
  if (out) console.log(out);
  if (err) console.log(err.replace(/^/gm, "  │ "));
  const ok = expect(result);
  console.log(`\n${ok ? "as expected" : "UNEXPECTED"}: exit code ${result.status}`);
  return ok;
}

const results = [
  scenario(
    "1. The old way: a require() patch, then a test harness restores the loader",
    ["old-way.mjs"],
    (r) =>
      r.status !== 0 &&
      r.stdout.includes("matches the reference: true") &&
      r.stderr.includes('No implementation in dispatch table "jaxFuncify"'),
  ),
  scenario(
    "2. dispatch-hook: the same program under the loader",
    ["--import", "dispatch-hook/loader.mjs", "hook-way.mjs"],
    (r) =>
      r.status === 0 &&
      (r.stdout.match(/matches the reference: true/g) ?? []).length === 4 &&
      r.stdout.includes("ok: every registration landed"),
  ),
  scenario(
    "3. dispatch-hook without the loader (a forgotten flag)",
    ["forgotten-flag.mjs"],
    (r) =>
      r.status !== 0 &&
      r.stderr.includes("the dispatch-hook loader is not installed") &&
      r.stderr.includes("4 registrations are pending on numba"),
  ),
  scenario(
    "4. Choosing a backend per call (examples/choosing-a-backend): pool() by the type of its input",
    ["main.mjs"],
    (r) => {
      const steps = r.stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line));
      const ran = (name) => steps.find((s) => s.step === name)?.ran?.join(",");
      return (
        r.status === 0 &&
        ran("a plain tensor-shaped object") === "default" &&
        ran("a float32 Tensor") === "typed-array" &&
        ran("a WasmTensor, wasm not prioritized") === "default" &&
        ran("a WasmTensor, wasm prioritized") === "wasm" &&
        steps.find((s) => s.step === "before wasm is asked for")?.wasmLoaded === false &&
        steps.find((s) => s.step === "mixed: a Tensor and a WasmTensor")?.error === "ERR_DISPATCH_MIXED_INPUTS" &&
        steps.find((s) => s.step === "reference check")?.disagreements === 0
      );
    },
    fileURLToPath(new URL("../choosing-a-backend/", import.meta.url)),
  ),
];
console.log(`\n${results.every(Boolean) ? "All four scenarios behaved as described." : "A scenario did not behave as described."}`);
process.exit(results.every(Boolean) ? 0 : 1);
