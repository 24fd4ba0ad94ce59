export { implementations } from "./implementations.js";
export { Col2Im, Im2Col, PoolLayer, PoolLayerGrad } from "./ops.js";
