/** Op types. A backend's dispatch table maps each op type to a function that builds its kernel. */
export class Op {
  get name() {
    return this.constructor.name;
  }
}

export class Elemwise extends Op {}
export class Add extends Elemwise {}
export class Mul extends Elemwise {}
export class Relu extends Elemwise {}
