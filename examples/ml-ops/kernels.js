// Optimised kernels: one pass over typed arrays, window bounds clipped once per output cell, and
// no allocation inside the loops. Checked against reference.js on random shapes and values.
import { Tensor } from "tensorlab";

/** Clipped window bounds for output row/column o: [start, end) in input coordinates. */
function bounds(o, stride, pad, kernel, size) {
  const start = o * stride - pad;
  return [Math.max(start, 0), Math.min(start + kernel, size), start];
}

export function pool(op, x) {
  const [n, c, h, w] = x.shape;
  const [oh, ow] = op.outputSize(h, w);
  const [kh, kw] = op.kernel;
  const [sh, sw] = op.stride;
  const [ph, pw] = op.padding;
  const src = x.data;
  const out = new Float32Array(n * c * oh * ow);
  let o = 0;
  for (let plane = 0; plane < n * c; plane++) {
    const base = plane * h * w;
    for (let oy = 0; oy < oh; oy++) {
      const [y0, y1] = bounds(oy, sh, ph, kh, h);
      for (let ox = 0; ox < ow; ox++) {
        const [x0, x1] = bounds(ox, sw, pw, kw, w);
        let best = Number.NEGATIVE_INFINITY;
        for (let y = y0; y < y1; y++) {
          const row = base + y * w;
          for (let xx = x0; xx < x1; xx++) if (src[row + xx] > best) best = src[row + xx];
        }
        out[o++] = best;
      }
    }
  }
  return new Tensor(out, [n, c, oh, ow]);
}

export function poolGrad(op, x, gy) {
  const [n, c, h, w] = x.shape;
  const [oh, ow] = op.outputSize(h, w);
  const [kh, kw] = op.kernel;
  const [sh, sw] = op.stride;
  const [ph, pw] = op.padding;
  const src = x.data;
  const g = gy.data;
  const gx = new Float32Array(x.size);
  let o = 0;
  for (let plane = 0; plane < n * c; plane++) {
    const base = plane * h * w;
    for (let oy = 0; oy < oh; oy++) {
      const [y0, y1] = bounds(oy, sh, ph, kh, h);
      for (let ox = 0; ox < ow; ox++) {
        const [x0, x1] = bounds(ox, sw, pw, kw, w);
        let best = base + y0 * w + x0;
        for (let y = y0; y < y1; y++) {
          const row = base + y * w;
          for (let xx = x0; xx < x1; xx++) if (src[row + xx] > src[best]) best = row + xx;
        }
        gx[best] += g[o++];
      }
    }
  }
  return new Tensor(gx, x.shape);
}

export function im2col(op, x) {
  const [n, c, h, w] = x.shape;
  const [oh, ow] = op.outputSize(h, w);
  const [kh, kw] = op.kernel;
  const [sh, sw] = op.stride;
  const [ph, pw] = op.padding;
  const src = x.data;
  const cols = oh * ow;
  const out = new Float32Array(n * c * kh * kw * cols);
  let o = 0;
  for (let plane = 0; plane < n * c; plane++) {
    const base = plane * h * w;
    for (let ky = 0; ky < kh; ky++) {
      for (let kx = 0; kx < kw; kx++) {
        for (let oy = 0; oy < oh; oy++) {
          const y = oy * sh - ph + ky;
          const rowInside = y >= 0 && y < h;
          for (let ox = 0; ox < ow; ox++, o++) {
            const xx = ox * sw - pw + kx;
            if (rowInside && xx >= 0 && xx < w) out[o] = src[base + y * w + xx];
          }
        }
      }
    }
  }
  return new Tensor(out, [n, c * kh * kw, cols]);
}

export function col2im(op, columns) {
  const [h, w] = op.imageShape;
  const [oh, ow] = op.outputSize(h, w);
  const [kh, kw] = op.kernel;
  const [sh, sw] = op.stride;
  const [ph, pw] = op.padding;
  const [n, rows] = columns.shape;
  const c = rows / (kh * kw);
  const src = columns.data;
  const out = new Float32Array(n * c * h * w);
  let i = 0;
  for (let plane = 0; plane < n * c; plane++) {
    const base = plane * h * w;
    for (let ky = 0; ky < kh; ky++) {
      for (let kx = 0; kx < kw; kx++) {
        for (let oy = 0; oy < oh; oy++) {
          const y = oy * sh - ph + ky;
          const rowInside = y >= 0 && y < h;
          for (let ox = 0; ox < ow; ox++, i++) {
            const xx = ox * sw - pw + kx;
            if (rowInside && xx >= 0 && xx < w) out[base + y * w + xx] += src[i];
          }
        }
      }
    }
  }
  return new Tensor(out, [n, c, h, w]);
}
