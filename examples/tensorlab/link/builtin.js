import { Dispatcher } from "dispatch-hook";
import { Add, Mul, Relu } from "../ops.js";
import { Tensor } from "../tensor.js";

function elementwise(fn) {
  return () =>
    (...args) => {
      const [first] = args;
      const out = new Float32Array(first.size);
      for (let i = 0; i < out.length; i++) out[i] = fn(...args.map((t) => t.data[i]));
      return new Tensor(out, first.shape);
    };
}

/** Creates a backend's dispatch table with tensorlab's own ops in it. */
export function createTable(backend) {
  const table = new Dispatcher({ name: `${backend}Funcify`, backend });
  table.register(
    Add,
    elementwise((a, b) => a + b),
  );
  table.register(
    Mul,
    elementwise((a, b) => a * b),
  );
  table.register(
    Relu,
    elementwise((a) => Math.max(a, 0)),
  );
  return table;
}
