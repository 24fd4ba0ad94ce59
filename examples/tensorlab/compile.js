import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
export const backends = ["numba", "jax", "mlx", "pytorch"];

/**
 * Loads a backend's dispatch module, lazily: the table does not exist until the first compile for
 * that backend. `moduleFormat: "cjs"` loads the CommonJS copy through require(), as older
 * frameworks do (and as require-patching plugins need).
 */
export async function loadBackend(backend, { moduleFormat = "esm" } = {}) {
  if (!backends.includes(backend))
    throw new RangeError(`tensorlab: unknown backend ${JSON.stringify(backend)}; choose one of ${backends.join(", ")}`);
  const module =
    moduleFormat === "cjs" ? require(`./link/${backend}/dispatch/basic.cjs`) : await import(`./link/${backend}/dispatch/basic.js`);
  return module[`${backend}Funcify`];
}

/**
 * Compiles a graph for a backend: each op is converted through the backend's table into a kernel.
 * A missing implementation raises the table's own error, at compile time.
 */
export async function compile(graph, { backend, moduleFormat } = {}) {
  const table = await loadBackend(backend, { moduleFormat });
  const kernels = new Map();
  for (const node of graph.nodes) {
    if (node.kind === "apply") kernels.set(node.id, table.resolve(node.op)(node.op));
  }
  return (inputs) => {
    const values = [];
    for (const node of graph.nodes) {
      if (node.kind === "input") {
        if (!(node.name in inputs)) throw new RangeError(`tensorlab: missing input ${JSON.stringify(node.name)}`);
        values[node.id] = inputs[node.name];
      } else {
        values[node.id] = kernels.get(node.id)(...node.inputs.map((id) => values[id]));
      }
    }
    return graph.outputs.map((id) => values[id]);
  };
}
