/** A dense float32 tensor: a flat buffer and a shape. */
export class Tensor {
  constructor(data, shape) {
    const size = shape.reduce((a, b) => a * b, 1);
    if (data.length !== size) throw new RangeError(`Tensor: ${data.length} values do not fill shape [${shape.join(", ")}]`);
    this.data = data instanceof Float32Array ? data : Float32Array.from(data);
    this.shape = [...shape];
  }

  static zeros(shape) {
    return new Tensor(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
  }

  get size() {
    return this.data.length;
  }
}
