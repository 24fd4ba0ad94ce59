// A tensor that lives in a (simulated) WebAssembly heap: it shares no base class with tensorlab's
// Tensor, so ml-ops's own kernels do not take it.
export class WasmTensor {
  constructor(data, shape) {
    this.heap = Float32Array.from(data);
    this.shape = [...shape];
  }

  get data() {
    return this.heap;
  }
}
