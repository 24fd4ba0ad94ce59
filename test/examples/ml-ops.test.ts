// ml-ops: every optimised kernel against the plain reference on random shapes and values, and the
// pooling gradient against finite differences.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
// @ts-expect-error: the examples are plain JavaScript without declarations.
import * as kernels from "../../examples/ml-ops/kernels.js";
// @ts-expect-error: as above.
import { Col2Im, Im2Col, PoolLayer, PoolLayerGrad } from "../../examples/ml-ops/ops.js";
// @ts-expect-error: as above.
import * as reference from "../../examples/ml-ops/reference.js";
// @ts-expect-error: as above.
import { Tensor } from "../../examples/tensorlab/tensor.js";

interface T {
  data: Float32Array;
  shape: number[];
  size: number;
}

const geometry = fc
  .record({
    n: fc.integer({ min: 1, max: 2 }),
    c: fc.integer({ min: 1, max: 3 }),
    kh: fc.integer({ min: 1, max: 3 }),
    kw: fc.integer({ min: 1, max: 3 }),
    sh: fc.integer({ min: 1, max: 3 }),
    sw: fc.integer({ min: 1, max: 3 }),
    extraH: fc.integer({ min: 0, max: 5 }),
    extraW: fc.integer({ min: 0, max: 5 }),
    ph: fc.nat(2),
    pw: fc.nat(2),
    seed: fc.integer(),
  })
  .map((g) => ({
    ...g,
    ph: Math.min(g.ph, g.kh - 1),
    pw: Math.min(g.pw, g.kw - 1),
    h: g.kh + g.extraH,
    w: g.kw + g.extraW,
  }));

function random(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) / 2 ** 32) * 2 - 1;
  };
}

function tensor(shape: number[], next: () => number): T {
  return new Tensor(Array.from({ length: shape.reduce((a, b) => a * b, 1) }, next), shape);
}

function close(a: T, b: T): void {
  expect(a.shape).toEqual(b.shape);
  for (let i = 0; i < a.size; i++) expect(Math.abs((a.data[i] as number) - (b.data[i] as number))).toBeLessThanOrEqual(1e-5);
}

describe("ml-ops kernels against the reference", () => {
  it("pool, poolGrad, im2col and col2im agree on random shapes, strides and padding", () => {
    fc.assert(
      fc.property(geometry, (g) => {
        const next = random(g.seed);
        const window = { kernel: [g.kh, g.kw], stride: [g.sh, g.sw], padding: [g.ph, g.pw] };
        const x = tensor([g.n, g.c, g.h, g.w], next);
        const pool = new PoolLayer(window);
        const [oh, ow] = pool.outputSize(g.h, g.w);
        close(kernels.pool(pool, x), reference.pool(pool, x));
        const gy = tensor([g.n, g.c, oh, ow], next);
        close(kernels.poolGrad(new PoolLayerGrad(window), x, gy), reference.poolGrad(new PoolLayerGrad(window), x, gy));
        const im2col = new Im2Col(window);
        const cols = kernels.im2col(im2col, x);
        close(cols, reference.im2col(im2col, x));
        const col2im = new Col2Im({ ...window, imageShape: [g.h, g.w] });
        close(kernels.col2im(col2im, cols), reference.col2im(col2im, cols));
      }),
      { numRuns: 150 },
    );
  });

  it("col2im is the adjoint of im2col: <im2col(x), y> = <x, col2im(y)>", () => {
    const next = random(7);
    const window = { kernel: 3, stride: 2, padding: 1 };
    const x = tensor([2, 2, 7, 6], next);
    const cols = kernels.im2col(new Im2Col(window), x);
    const y = tensor(cols.shape, next);
    const back = kernels.col2im(new Col2Im({ ...window, imageShape: [7, 6] }), y);
    const dot = (a: T, b: T) => a.data.reduce((sum, v, i) => sum + v * (b.data[i] as number), 0);
    expect(dot(cols, y)).toBeCloseTo(dot(x, back), 3);
  });
});

describe("PoolLayerGrad against finite differences", () => {
  it("matches d/dx sum(pool(x) * gy)", () => {
    fc.assert(
      fc.property(geometry, (g) => {
        const window = { kernel: [g.kh, g.kw], stride: [g.sh, g.sw], padding: [g.ph, g.pw] };
        const size = g.n * g.c * g.h * g.w;
        // Distinct values 0.1 apart, so a step of eps cannot change which cell is the maximum.
        const order = Array.from({ length: size }, (_, i) => i);
        const next = random(g.seed);
        order.sort(() => next());
        const x = new Tensor(
          order.map((v) => v * 0.1),
          [g.n, g.c, g.h, g.w],
        );
        const pool = new PoolLayer(window);
        const [oh, ow] = pool.outputSize(g.h, g.w);
        const gy = tensor([g.n, g.c, oh, ow], next);
        const loss = (input: T) =>
          kernels.pool(pool, input).data.reduce((sum: number, v: number, i: number) => sum + v * (gy.data[i] as number), 0);
        const analytic = kernels.poolGrad(new PoolLayerGrad(window), x, gy);
        const eps = 0.01;
        for (let i = 0; i < size; i++) {
          const plus = new Tensor(Float32Array.from(x.data), x.shape);
          const minus = new Tensor(Float32Array.from(x.data), x.shape);
          plus.data[i] += eps;
          minus.data[i] -= eps;
          const numeric = (loss(plus) - loss(minus)) / (2 * eps);
          expect(Math.abs(numeric - analytic.data[i])).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(numeric)));
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("op validation", () => {
  it("refuses bad geometry", () => {
    expect(() => new PoolLayer({ kernel: 0 })).toThrow(RangeError);
    expect(() => new PoolLayer({ kernel: 2, padding: 2 })).toThrow(/padding must be smaller/);
    expect(() => new PoolLayer({ kernel: 2.5 })).toThrow(/integer/);
    expect(() => new PoolLayer({ kernel: 5 }).outputSize(2, 2)).toThrow(/does not fit/);
    expect(() => new Tensor([1, 2, 3], [2, 2])).toThrow(/do not fill/);
  });
});
