// Average pooling over NCHW input (no padding), with a plain reference and an optimised kernel.
// The plugin does not depend on dispatch-hook: its registration modules (dispatch/*.js) import a
// backend's table and write into it, as the Python plugin's modules do, and the loader runs each
// right after its backend's dispatch module.
import { Op, Tensor } from "tensorlab";

export class AvgPool extends Op {
  constructor({ kernel, stride = kernel }) {
    super();
    if (!Number.isInteger(kernel) || !Number.isInteger(stride) || kernel < 1 || stride < 1) {
      throw new RangeError("AvgPool: kernel and stride must be positive integers");
    }
    this.kernel = kernel;
    this.stride = stride;
  }

  outputSize(h, w) {
    const size = (n) => Math.floor((n - this.kernel) / this.stride) + 1;
    if (size(h) < 1 || size(w) < 1) throw new RangeError(`AvgPool: a ${this.kernel}x${this.kernel} kernel does not fit ${h}x${w}`);
    return [size(h), size(w)];
  }
}

/** One output value at a time: the mean of each window. */
export function reference(op, x) {
  const [n, c, h, w] = x.shape;
  const [oh, ow] = op.outputSize(h, w);
  const out = [];
  for (let plane = 0; plane < n * c; plane++)
    for (let oy = 0; oy < oh; oy++)
      for (let ox = 0; ox < ow; ox++) {
        let sum = 0;
        for (let ky = 0; ky < op.kernel; ky++)
          for (let kx = 0; kx < op.kernel; kx++) sum += x.data[plane * h * w + (oy * op.stride + ky) * w + ox * op.stride + kx];
        out.push(sum / (op.kernel * op.kernel));
      }
  return new Tensor(out, [n, c, oh, ow]);
}

/** One pass over a typed array with running row sums: what the backends run. */
export function avgPool(op, x) {
  const [n, c, h, w] = x.shape;
  const [oh, ow] = op.outputSize(h, w);
  const { kernel: k, stride: s } = op;
  const out = new Float32Array(n * c * oh * ow);
  const rows = new Float64Array(w);
  let o = 0;
  for (let plane = 0; plane < n * c; plane++) {
    for (let oy = 0; oy < oh; oy++) {
      rows.fill(0);
      for (let ky = 0; ky < k; ky++) {
        const row = plane * h * w + (oy * s + ky) * w;
        for (let xx = 0; xx < w; xx++) rows[xx] += x.data[row + xx];
      }
      for (let ox = 0; ox < ow; ox++) {
        let sum = 0;
        for (let kx = 0; kx < k; kx++) sum += rows[ox * s + kx];
        out[o++] = sum / (k * k);
      }
    }
  }
  return new Tensor(out, [n, c, oh, ow]);
}

/** What each registration module writes into its backend's table. */
export const kernel = (op) => (x) => avgPool(op, x);
