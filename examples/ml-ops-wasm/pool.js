// Loaded on the first pool() call that this backend takes, never before.
import * as kernels from "ml-ops/kernels";
import { Tensor } from "tensorlab";
import { WasmTensor } from "./wasm-tensor.js";

globalThis.mlOpsWasmLoaded = true;

export function pool(op, x) {
  const out = kernels.pool(op, new Tensor(x.heap, x.shape));
  return new WasmTensor(out.data, out.shape);
}
