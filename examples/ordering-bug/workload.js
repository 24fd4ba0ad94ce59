// What every scenario computes: a graph that uses all four ml-ops ops, and the reference answer.
import { Col2Im, Im2Col, PoolLayer, PoolLayerGrad } from "ml-ops";
import * as reference from "ml-ops/reference";
import { Graph, Tensor } from "tensorlab";

const window = { kernel: 2, stride: 2, padding: 1 };
const ops = {
  pool: new PoolLayer(window),
  grad: new PoolLayerGrad(window),
  im2col: new Im2Col(window),
  col2im: new Col2Im({ ...window, imageShape: [5, 5] }),
};

export const graph = new Graph();
const x = graph.input("x");
const gy = graph.input("gy");
const cols = graph.apply(ops.im2col, x);
graph.output(graph.apply(ops.pool, x), graph.apply(ops.grad, x, gy), cols, graph.apply(ops.col2im, cols));

export const inputs = {
  x: new Tensor(
    Array.from({ length: 25 }, (_, i) => ((i * 7) % 11) - 5 + i / 100),
    [1, 1, 5, 5],
  ),
  gy: new Tensor(
    Array.from({ length: 9 }, (_, i) => i + 1),
    [1, 1, 3, 3],
  ),
};

const expected = [
  reference.pool(ops.pool, inputs.x),
  reference.poolGrad(ops.grad, inputs.x, inputs.gy),
  reference.im2col(ops.im2col, inputs.x),
  reference.col2im(ops.col2im, reference.im2col(ops.im2col, inputs.x)),
];

/** Whether outputs match the reference within float32 rounding. */
export function matchesReference(outputs) {
  return outputs.every((t, i) => t.data.every((v, j) => Math.abs(v - expected[i].data[j]) <= 1e-5 * Math.max(1, Math.abs(v))));
}
