// What ml-ops puts in a backend's table: for each op type, a function from the op to its kernel.
import * as kernels from "./kernels.js";
import { Col2Im, Im2Col, PoolLayer, PoolLayerGrad } from "./ops.js";

export const implementations = [
  [PoolLayer, (op) => (x) => kernels.pool(op, x)],
  [PoolLayerGrad, (op) => (x, gy) => kernels.poolGrad(op, x, gy)],
  [Im2Col, (op) => (x) => kernels.im2col(op, x)],
  [Col2Im, (op) => (cols) => kernels.col2im(op, cols)],
];
