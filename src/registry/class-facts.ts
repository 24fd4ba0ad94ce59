/** What a class says of itself that the Dispatcher asks: whether two classes are copies of one, whose a prototype is, and whether it is a protocol. */

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

const plainHasInstance = Function.prototype[Symbol.hasInstance];

/** A key with its own Symbol.hasInstance is a protocol: it matches by test, not by ancestry. */
export const isAbstract = (type: Function): boolean =>
  Object.hasOwn(type, Symbol.hasInstance) && type[Symbol.hasInstance] !== plainHasInstance;

/** A prototype's class name, for messages. */
export function typeName(proto: object | null): string {
  if (proto === null) return "null-prototype object";
  const ctor = ownConstructor(proto);
  return typeof ctor === "function" && ctor.name ? ctor.name : "(anonymous)";
}
