/**
 * A function's parameter names, read from its source text (`Function.prototype.toString`), for
 * `args` given by name. The text is read token by token: comments, strings, template literals and
 * regular expressions are skipped whole, and brackets are counted, so that nothing inside a default
 * value or a destructuring pattern can split the list or end it early.
 */

interface Token {
  readonly kind: "name" | "punct" | "literal";
  readonly text: string;
}

const identifier =
  /(?:[\p{ID_Start}$_]|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]+\})(?:[\p{ID_Continue}$\u200C\u200D]|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]+\})*/uy;
const number = /\.?[0-9][0-9a-zA-Z_.]*/y;
const space = /(?:\s+|\/\/[^\n\r\u2028\u2029]*|\/\*[\s\S]*?(?:\*\/|$))+/y;
/** Words after which a `/` begins a regular expression, not a division. */
const beforeRegex = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

/** Reads tokens from the start of a function's text; whitespace and comments are skipped. */
class Scanner {
  #at = 0;
  #previous: Token | undefined;
  constructor(readonly text: string) {}

  next(): Token | undefined {
    space.lastIndex = this.#at;
    if (space.test(this.text)) this.#at = space.lastIndex;
    if (this.#at >= this.text.length) return undefined;
    const token = this.#read();
    this.#previous = token;
    return token;
  }

  #read(): Token {
    const { text } = this;
    const c = text[this.#at] as string;
    if (c === '"' || c === "'") return this.#literal(() => this.#string(c));
    if (c === "`") return this.#literal(() => this.#template());
    if (c === "/" && this.#regexMayStart()) return this.#literal(() => this.#regex());
    for (const punct of ["...", "=>"]) {
      if (text.startsWith(punct, this.#at)) {
        this.#at += punct.length;
        return { kind: "punct", text: punct };
      }
    }
    for (const [pattern, kind] of [
      [identifier, "name"],
      [number, "literal"],
    ] as const) {
      pattern.lastIndex = this.#at;
      const match = pattern.exec(text);
      if (match !== null) {
        this.#at = pattern.lastIndex;
        return { kind, text: match[0] };
      }
    }
    this.#at++;
    return { kind: "punct", text: c };
  }

  #regexMayStart(): boolean {
    const p = this.#previous;
    if (p === undefined) return true;
    if (p.kind === "name") return beforeRegex.has(p.text);
    return p.kind === "punct" && p.text !== ")" && p.text !== "]" && p.text !== "}";
  }

  #literal(skip: () => void): Token {
    const start = this.#at;
    skip();
    return { kind: "literal", text: this.text.slice(start, this.#at) };
  }

  #string(quote: string): void {
    for (this.#at++; this.#at < this.text.length; this.#at++) {
      const c = this.text[this.#at];
      if (c === "\\") this.#at++;
      else if (c === quote || c === "\n") break;
    }
    this.#at++;
  }

  /** A template literal, with every `${...}` read as tokens up to its own closing brace. */
  #template(): void {
    for (this.#at++; this.#at < this.text.length; ) {
      const c = this.text[this.#at];
      if (c === "\\") this.#at += 2;
      else if (c === "`") break;
      else if (c === "$" && this.text[this.#at + 1] === "{") {
        this.#at += 2;
        this.#previous = { kind: "punct", text: "{" };
        for (let depth = 1; depth > 0; ) {
          const token = this.next();
          if (token === undefined) return;
          if (token.text === "{") depth++;
          else if (token.text === "}") depth--;
        }
      } else this.#at++;
    }
    this.#at++;
  }

  #regex(): void {
    let inClass = false;
    for (this.#at++; this.#at < this.text.length; this.#at++) {
      const c = this.text[this.#at];
      if (c === "\\") this.#at++;
      else if (c === "[") inClass = true;
      else if (c === "]") inClass = false;
      else if ((c === "/" && !inClass) || c === "\n") break;
    }
    this.#at++;
    identifier.lastIndex = this.#at;
    if (identifier.test(this.text)) this.#at = identifier.lastIndex;
  }
}

const decodeEscapes = (name: string) =>
  name.replace(/\\u\{([0-9a-fA-F]+)\}|\\u([0-9a-fA-F]{4})/g, (_, long: string | undefined, short: string | undefined) =>
    String.fromCodePoint(Number.parseInt(long ?? short ?? "0", 16)),
  );

const opening = new Set(["(", "[", "{"]);
const closing = new Set([")", "]", "}"]);

/**
 * What can be read of a function's parameters: one entry per parameter, its name, or "" where a
 * destructuring pattern stands (its name cannot be read); `readable` is false for a function whose
 * text has no parameter list (a native or bound function), whose names cannot be read at all; `rest`
 * is the index of a rest parameter (`...arrays`), if there is one.
 */
export function readParameters(fn: Function): { names: string[]; readable: boolean; rest?: number } {
  const text = Function.prototype.toString.call(fn);
  const unreadable = { names: [], readable: false };
  if (/\{\s*\[native code\]\s*\}\s*$/.test(text)) return unreadable;
  const scanner = new Scanner(text);
  const first = [scanner.next(), scanner.next(), scanner.next()];
  // An arrow with one parameter and no parentheses: `x => ...`, `async x => ...`.
  const [a, b, c] = first;
  if (a?.kind === "name" && b?.text === "=>") return { names: [decodeEscapes(a.text)], readable: true };
  if (a?.text === "async" && b?.kind === "name" && c?.text === "=>") return { names: [decodeEscapes(b.text)], readable: true };
  const next = () => (first.length > 0 ? first.shift() : scanner.next());
  // The list starts at the first "(" outside brackets (a computed method key has its own).
  let depth = 0;
  for (let token = next(); !(depth === 0 && token?.text === "("); token = next()) {
    if (token === undefined || (depth === 0 && token.text === "{")) return unreadable;
    if (token.kind === "punct" && opening.has(token.text)) depth++;
    else if (token.kind === "punct" && closing.has(token.text)) depth--;
  }
  const names: string[] = [];
  let current: Token[] = [];
  depth = 1;
  for (let token = next(); token !== undefined; token = next()) {
    if (token.kind === "punct" && depth === 1 && (token.text === "," || token.text === ")")) {
      const spread = current[0]?.text === "...";
      const [head, after] = spread ? current.slice(1) : current;
      if (head !== undefined)
        names.push(head.kind === "name" && (after === undefined || after.text === "=") ? decodeEscapes(head.text) : "");
      if (token.text === ")") return spread ? { names, readable: true, rest: names.length - 1 } : { names, readable: true };
      current = [];
      continue;
    }
    if (token.kind === "punct" && opening.has(token.text)) depth++;
    else if (token.kind === "punct" && closing.has(token.text)) depth--;
    current.push(token);
  }
  return unreadable;
}

/** The parameter names of a function, "" for a destructured one; none for a native or bound function. */
export function parameterNames(fn: Function): string[] {
  return readParameters(fn).names;
}
