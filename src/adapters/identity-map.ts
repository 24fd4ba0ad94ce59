/**
 * A source map that maps code onto itself, naming the file it came from: what a host needs when
 * it names a module's source after the module's id, and the id carries a query of ours (Vite's SSR
 * transform names the source `basename(id)`, so stack frames would show `table.js?dispatch-hook-original`).
 * Given as the first map of the chain, it is the one whose `sources` the combined map keeps. One
 * segment where a line starts and wherever a word starts or ends, as Vite's own maps do
 * (magic-string's `hires: "boundary"`): a frame's line and column map back exactly.
 */
const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function vlq(n: number): string {
  let value = n < 0 ? (-n << 1) | 1 : n << 1;
  let out = "";
  do {
    let digit = value & 31;
    value >>>= 5;
    if (value > 0) digit |= 32;
    out += digits[digit];
  } while (value > 0);
  return out;
}

const word = /\w/;

export interface IdentityMap {
  readonly version: 3;
  readonly sources: string[];
  readonly sourcesContent: string[];
  readonly names: string[];
  readonly mappings: string;
}

export function identityMap(code: string, file: string): IdentityMap {
  let lastLine = 0;
  let lastColumn = 0;
  const lines = code.split("\n").map((line, l) => {
    const segments: string[] = [];
    let column = 0;
    for (let i = 0; i < line.length; i++) {
      if (i > 0 && word.test(line[i] as string) === word.test(line[i - 1] as string)) continue;
      // Generated column (from the line's last segment), source 0, source line and column (from the last segment anywhere).
      segments.push(`${vlq(i - column)}A${vlq(l - lastLine)}${vlq(i - lastColumn)}`);
      column = i;
      lastLine = l;
      lastColumn = i;
    }
    return segments.join(",");
  });
  return { version: 3, sources: [file], sourcesContent: [code], names: [], mappings: lines.join(";") };
}
