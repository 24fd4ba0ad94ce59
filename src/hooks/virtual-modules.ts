/**
 * The URLs the Node hooks hand out besides a module's own (where its facade is served, so that
 * resolution names the real file). The original is the same URL with one more query parameter
 * (`basic.js?dispatch-hook-original`), so import.meta.filename, require()'s cache key, __filename and
 * relative resolution stay the file's own; each marker is a virtual sibling
 * (`basic.js.dispatch-hook-step0.mjs`, query and hash kept), one per module instance. Each URL names
 * all it takes to generate the module again: the hooks keep no table of them.
 */
import type { MarkerKind } from "./facade.js";

/** What every URL of ours contains, virtual or original: a cheap first test before parsing. */
export const TAG = "dispatch-hook-";
/** What every virtual URL contains. */
const VIRTUAL_TAG = ".dispatch-hook-";
const ORIGINAL = "dispatch-hook-original";
// "-cjs" marks a CommonJS original: its exports are its namespace's default export.
const pattern = /\.dispatch-hook-(require|step|early|done)(\d*)(-cjs)?\.[mc]js$/;

function split(href: string): [string, string] {
  const cut = href.search(/[?#]/);
  return cut < 0 ? [href, ""] : [href.slice(0, cut), href.slice(cut)];
}

export interface VirtualModule {
  readonly original: string;
  readonly kind: MarkerKind;
  readonly index: number;
  readonly commonjs: boolean;
}

export function virtualUrl(original: string, kind: MarkerKind, index?: number, commonjs = false): string {
  const [base, rest] = split(original);
  return `${base}${VIRTUAL_TAG}${kind}${index ?? ""}${commonjs ? "-cjs" : ""}.mjs${rest}`;
}

export function parseVirtual(href: string): VirtualModule | undefined {
  if (!href.includes(VIRTUAL_TAG)) return undefined;
  const [base, rest] = split(href);
  const found = pattern.exec(base);
  if (found === null) return undefined;
  return {
    original: base.slice(0, found.index) + rest,
    kind: found[1] as MarkerKind,
    index: Number(found[2] || 0),
    commonjs: found[3] !== undefined,
  };
}

/** A module URL without its query and hash: the file every instance of the module is made from. */
export const fileOf = (href: string): string => split(href)[0];

/** The URL a facade imports its original by: the module's URL, its query extended by our parameter. */
export function originalUrl(href: string): string {
  const [base, rest] = split(href);
  const hash = rest.indexOf("#");
  const query = hash < 0 ? rest : rest.slice(0, hash);
  return `${base}${query === "" ? "?" : `${query}&`}${ORIGINAL}${hash < 0 ? "" : rest.slice(hash)}`;
}

/**
 * The module's own URL, if `href` is the URL of an original (see originalUrl()): our parameter
 * wherever it is in the query, with or without an empty value, since another hook may rewrite the
 * query (import-in-the-middle adds its own after ours, through URLSearchParams).
 */
export function parseOriginal(href: string): string | undefined {
  const at = href.lastIndexOf(ORIGINAL);
  if (at < 1) return undefined;
  const before = href[at - 1];
  let end = at + ORIGINAL.length;
  if (href[end] === "=") end++;
  const after = href[end];
  if ((before !== "?" && before !== "&") || (after !== undefined && after !== "&" && after !== "#")) return undefined;
  const hash = href.indexOf("#");
  if (hash >= 0 && hash < at) return undefined;
  // "?dispatch-hook-original&b" leaves "?b"; "?a&dispatch-hook-original" leaves "?a".
  if (after === "&") return href.slice(0, at) + href.slice(end + 1);
  return href.slice(0, at - 1) + href.slice(end);
}
