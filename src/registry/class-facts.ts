/** What a class says of itself that the Dispatcher asks: whether two classes are copies of one, and whose a prototype is. */

/**
 * Whether two classes are copies of one module's class (the module loaded twice: a nested install, a
 * bundler's inlined copy beside Node's): the same source text, and each extends its own parent,
 * since a copy of a module copies the parent too; classes a factory or mixin makes share theirs.
 */
export const copies = (a: Function, b: Function): boolean =>
  Function.prototype.toString.call(a) === Function.prototype.toString.call(b) &&
  (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b) || Object.getPrototypeOf(a) === Function.prototype);

/** The class a prototype says it belongs to (its own `constructor`), if it says. */
export const ownConstructor = (proto: object): unknown =>
  Object.hasOwn(proto, "constructor") ? (proto as { constructor: unknown }).constructor : undefined;
