// Reference implementations: plain and obvious, one output value at a time. The optimised kernels
// are tested against these.
import { Tensor } from "tensorlab";

const at = (t, n, c, h, w) => t.data[((n * t.shape[1] + c) * t.shape[2] + h) * t.shape[3] + w];

function windowCells(op, oy, ox, h, w) {
  const cells = [];
  for (let ky = 0; ky < op.kernel[0]; ky++) {
    for (let kx = 0; kx < op.kernel[1]; kx++) {
      const y = oy * op.stride[0] - op.padding[0] + ky;
      const x = ox * op.stride[1] - op.padding[1] + kx;
      cells.push({ ky, kx, y, x, inside: y >= 0 && y < h && x >= 0 && x < w });
    }
  }
  return cells;
}

export function pool(op, x) {
  const [n, c, h, w] = x.shape;
  const [oh, ow] = op.outputSize(h, w);
  const out = [];
  for (let i = 0; i < n; i++)
    for (let ch = 0; ch < c; ch++)
      for (let oy = 0; oy < oh; oy++)
        for (let ox = 0; ox < ow; ox++) {
          const values = windowCells(op, oy, ox, h, w)
            .filter((cell) => cell.inside)
            .map((cell) => at(x, i, ch, cell.y, cell.x));
          out.push(Math.max(...values));
        }
  return new Tensor(out, [n, c, oh, ow]);
}

export function poolGrad(op, x, gy) {
  const [n, c, h, w] = x.shape;
  const [oh, ow] = op.outputSize(h, w);
  const gx = new Array(x.size).fill(0);
  for (let i = 0; i < n; i++)
    for (let ch = 0; ch < c; ch++)
      for (let oy = 0; oy < oh; oy++)
        for (let ox = 0; ox < ow; ox++) {
          const inside = windowCells(op, oy, ox, h, w).filter((cell) => cell.inside);
          let best = inside[0];
          for (const cell of inside) if (at(x, i, ch, cell.y, cell.x) > at(x, i, ch, best.y, best.x)) best = cell;
          gx[((i * c + ch) * h + best.y) * w + best.x] += at(gy, i, ch, oy, ox);
        }
  return new Tensor(gx, x.shape);
}

export function im2col(op, x) {
  const [n, c, h, w] = x.shape;
  const [oh, ow] = op.outputSize(h, w);
  const rows = c * op.kernel[0] * op.kernel[1];
  const out = new Array(n * rows * oh * ow).fill(0);
  for (let i = 0; i < n; i++)
    for (let ch = 0; ch < c; ch++)
      for (let oy = 0; oy < oh; oy++)
        for (let ox = 0; ox < ow; ox++)
          for (const cell of windowCells(op, oy, ox, h, w)) {
            const row = (ch * op.kernel[0] + cell.ky) * op.kernel[1] + cell.kx;
            out[(i * rows + row) * oh * ow + oy * ow + ox] = cell.inside ? at(x, i, ch, cell.y, cell.x) : 0;
          }
  return new Tensor(out, [n, rows, oh * ow]);
}

export function col2im(op, cols) {
  const [h, w] = op.imageShape;
  const [oh, ow] = op.outputSize(h, w);
  const [n, rows] = cols.shape;
  const c = rows / (op.kernel[0] * op.kernel[1]);
  const out = new Array(n * c * h * w).fill(0);
  for (let i = 0; i < n; i++)
    for (let ch = 0; ch < c; ch++)
      for (let oy = 0; oy < oh; oy++)
        for (let ox = 0; ox < ow; ox++)
          for (const cell of windowCells(op, oy, ox, h, w)) {
            if (!cell.inside) continue;
            const row = (ch * op.kernel[0] + cell.ky) * op.kernel[1] + cell.kx;
            out[((i * c + ch) * h + cell.y) * w + cell.x] += cols.data[(i * rows + row) * oh * ow + oy * ow + ox];
          }
  return new Tensor(out, [n, c, h, w]);
}
