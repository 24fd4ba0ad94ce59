import { Op } from "tensorlab";

function pair(value, what) {
  const [a, b] = typeof value === "number" ? [value, value] : value;
  if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < 0)
    throw new RangeError(`${what} must be a non-negative integer or a pair of them`);
  return [a, b];
}

/** The shared geometry of the windowed ops: a kernel swept with a stride over a zero-padded image. */
class WindowOp extends Op {
  constructor({ kernel, stride = kernel, padding = 0 }) {
    super();
    this.kernel = pair(kernel, "kernel");
    this.stride = pair(stride, "stride");
    this.padding = pair(padding, "padding");
    if (this.kernel.some((k) => k === 0) || this.stride.some((s) => s === 0)) throw new RangeError("kernel and stride must be positive");
    if (this.padding[0] >= this.kernel[0] || this.padding[1] >= this.kernel[1])
      throw new RangeError("padding must be smaller than the kernel");
  }

  /** Output height and width for an input of height h and width w. */
  outputSize(h, w) {
    const [kh, kw] = this.kernel;
    const [sh, sw] = this.stride;
    const [ph, pw] = this.padding;
    const oh = Math.floor((h + 2 * ph - kh) / sh) + 1;
    const ow = Math.floor((w + 2 * pw - kw) / sw) + 1;
    if (oh < 1 || ow < 1) throw new RangeError(`a ${kh}x${kw} kernel does not fit a ${h}x${w} image with padding ${ph},${pw}`);
    return [oh, ow];
  }
}

/** 2-D max pooling over NCHW input. Padding cells never win the max. */
export class PoolLayer extends WindowOp {}

/** The gradient of PoolLayer: inputs (x, gy), output gx, routed to the first maximum of each window. */
export class PoolLayerGrad extends WindowOp {}

/** NCHW image → [N, C·kh·kw, oh·ow] columns, zero padding. */
export class Im2Col extends WindowOp {}

/** The adjoint of Im2Col: columns → an NCHW image of `imageShape` [H, W], overlaps summed. */
export class Col2Im extends WindowOp {
  constructor({ imageShape, ...window }) {
    super(window);
    const [h, w] = pair(imageShape, "imageShape");
    this.imageShape = [h, w];
    this.outputSize(h, w);
  }
}
