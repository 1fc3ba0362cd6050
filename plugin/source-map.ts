const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function vlq(value: number): string {
  let v = value < 0 ? (-value << 1) | 1 : value << 1;
  let out = '';
  do {
    let digit = v & 31;
    v >>>= 5;
    if (v > 0) digit |= 32;
    out += BASE64[digit];
  } while (v > 0);
  return out;
}

export interface LineSourceMap {
  version: 3;
  file: string;
  sources: string[];
  sourcesContent: string[];
  names: string[];
  mappings: string;
}

/**
 * A source map where generated line i (0-based) maps, at column 0, to the 1-based source
 * position `positions[i]`. Enough for Vitest to point each test at its YAML line.
 */
export function lineSourceMap(options: { file: string; source: string; positions: Array<{ line: number; column: number }> }): LineSourceMap {
  let previousLine = 0;
  let previousColumn = 0;
  const mappings = options.positions
    .map(({ line, column }) => {
      const l = Math.max(0, line - 1);
      const c = Math.max(0, column - 1);
      const segment = `A${vlq(0)}${vlq(l - previousLine)}${vlq(c - previousColumn)}`;
      previousLine = l;
      previousColumn = c;
      return segment;
    })
    .join(';');
  return { version: 3, file: options.file, sources: [options.file], sourcesContent: [options.source], names: [], mappings };
}
