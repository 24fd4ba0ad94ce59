/** Colour for people at a terminal, plain text everywhere else (CI logs, pipes, NO_COLOR). */
export interface Style {
  readonly bold: (text: string) => string;
  readonly red: (text: string) => string;
  readonly green: (text: string) => string;
  readonly dim: (text: string) => string;
}

export function createStyle(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): Style {
  const on = stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "") && env.TERM !== "dumb";
  const wrap = (open: number, close: number) => (text: string) => (on ? `\x1b[${open}m${text}\x1b[${close}m` : text);
  return { bold: wrap(1, 22), red: wrap(31, 39), green: wrap(32, 39), dim: wrap(2, 22) };
}
