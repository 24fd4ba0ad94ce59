/** A graph of nodes, each applying an op to earlier nodes or to named inputs. */
export class Graph {
  constructor() {
    this.nodes = [];
    this.inputs = [];
    this.outputs = [];
  }

  input(name) {
    const node = { id: this.nodes.length, kind: "input", name };
    this.nodes.push(node);
    this.inputs.push(node);
    return node;
  }

  apply(op, ...inputs) {
    const node = { id: this.nodes.length, kind: "apply", op, inputs: inputs.map((n) => n.id) };
    this.nodes.push(node);
    return node;
  }

  output(...nodes) {
    this.outputs.push(...nodes.map((n) => n.id));
    return this;
  }

  /** The op types the graph uses, in first-use order. */
  opTypes() {
    return [...new Set(this.nodes.filter((n) => n.kind === "apply").map((n) => n.op.constructor))];
  }
}
