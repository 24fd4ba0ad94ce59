export { backends, compile, loadBackend } from "./compile.js";
export { Graph } from "./graph.js";
export { Add, Elemwise, Mul, Op, Relu } from "./ops.js";
export { Tensor } from "./tensor.js";
