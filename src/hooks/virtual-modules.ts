/**
 * The URLs of the modules the Node hooks generate: a dispatch module's facade and its markers live
 * at virtual siblings of the module's own file (`basic.js.dispatch-hook-facade.mjs`, with the
 * module's query and hash kept), so that every module instance has its own, the original keeps its
 * URL, and require() (which keys modules by file name) never mistakes one for the other. The URL
 * names everything needed to generate the module again: the hooks keep no table of them.
 */
/** "cjs-facade" is what require() of a CommonJS dispatch module gets (a .cjs sibling); the rest are ES modules. */
export type VirtualKind = "facade" | "cjs-facade" | "require" | "step" | "done";

/** What every virtual URL contains: a cheap first test before parsing. */
export const VIRTUAL_TAG = ".dispatch-hook-";
// "-cjs" marks a CommonJS original: its exports are its namespace's default export.
const pattern = /\.dispatch-hook-(facade|cjs-facade|require|step|done)(\d*)(-cjs)?\.[mc]js$/;

function split(href: string): [string, string] {
  const cut = href.search(/[?#]/);
  return cut < 0 ? [href, ""] : [href.slice(0, cut), href.slice(cut)];
}

export interface VirtualModule {
  readonly original: string;
  readonly kind: VirtualKind;
  readonly index: number;
  readonly commonjs: boolean;
}

export function virtualUrl(original: string, kind: VirtualKind, index?: number, commonjs = false): string {
  const [base, rest] = split(original);
  return `${base}${VIRTUAL_TAG}${kind}${index ?? ""}${commonjs ? "-cjs" : ""}.${kind === "cjs-facade" ? "cjs" : "mjs"}${rest}`;
}

export function parseVirtual(href: string): VirtualModule | undefined {
  if (!href.includes(VIRTUAL_TAG)) return undefined;
  const [base, rest] = split(href);
  const found = pattern.exec(base);
  if (found === null) return undefined;
  return {
    original: base.slice(0, found.index) + rest,
    kind: found[1] as VirtualKind,
    index: Number(found[2] || 0),
    commonjs: found[3] !== undefined,
  };
}
