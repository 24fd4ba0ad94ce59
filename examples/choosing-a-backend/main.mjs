// Choosing a backend per call: ml-ops's pool() picks the typed-array kernel for a float32 Tensor,
// the reference for anything else tensor-shaped, and ml-ops-wasm's backend (declared only in its
// package.json, loaded on first use) when asked for. Prints one JSON line per step, for the demo.
import { backendOptions, referenceCheck } from "dispatch-hook";
import { PoolLayer } from "ml-ops";
import { backends, pool, poolGrad } from "ml-ops/choose";
import { WasmTensor } from "ml-ops-wasm";
import { Tensor } from "tensorlab";

const op = new PoolLayer({ kernel: 2, stride: 2, padding: 0 });
const values = Array.from({ length: 16 }, (_, i) => ((i * 7) % 11) - 5);
const shape = [1, 1, 4, 4];
const plain = { data: values, shape }; // tensor-shaped, but not a Tensor: the reference takes it
const tensor = new Tensor(values, shape);
const wasm = new WasmTensor(values, shape);

const step = (name, fn) => {
  const trace = [];
  try {
    const result = backendOptions({ trace }, fn);
    console.log(
      JSON.stringify({
        step: name,
        ran: trace.map((t) => t.ran),
        skipped: trace.flatMap((t) => t.skipped.map((s) => `${s.backend}: ${s.reason}`)),
        result: Array.from(result.data),
      }),
    );
  } catch (error) {
    console.log(JSON.stringify({ step: name, error: error.code, message: error.message.split("\n")[0] }));
  }
};

step("a plain tensor-shaped object", () => pool(op, plain));
step("a float32 Tensor", () => pool(op, tensor));
console.log(JSON.stringify({ step: "before wasm is asked for", wasmLoaded: globalThis.mlOpsWasmLoaded === true }));
step("a WasmTensor, wasm not prioritized", () => pool(op, wasm));
step("a WasmTensor, wasm prioritized", () => backendOptions({ prioritize: ["wasm"] }, () => pool(op, wasm)));
console.log(JSON.stringify({ step: "after", wasmLoaded: globalThis.mlOpsWasmLoaded === true }));
step("mixed: a Tensor and a WasmTensor", () => backendOptions({ prioritize: ["wasm"] }, () => poolGrad(op, tensor, wasm)));

const random = () =>
  new Tensor(
    Array.from({ length: 36 }, () => Math.round(Math.random() * 20 - 10)),
    [1, 1, 6, 6],
  );
const report = referenceCheck(pool, {
  inputs: Array.from({ length: 20 }, () => [op, random()]),
  prepare: (backend, [o, x]) => [o, backend === "wasm" ? new WasmTensor(x.data, x.shape) : x],
  normalize: (_backend, result) => Array.from(result.data),
  equal: (actual, expected) => actual.every((v, i) => v === expected.data[i]),
});
console.log(
  JSON.stringify({
    step: "reference check",
    backends: report.backends,
    checked: report.checked,
    disagreements: report.disagreements.length,
  }),
);
console.log(`\n${backends.docs("pool")}`);
