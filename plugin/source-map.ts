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
 * A source map where generated line i (0-based) maps, at column 0, to source line
 * `sourceLines[i]` (1-based). Enough for Vitest to point each test at its YAML line.
 */
export function lineSourceMap(options: { file: string; source: string; sourceLines: number[] }): LineSourceMap {
  let previous = 0;
  const mappings = options.sourceLines
    .map((line) => {
      const zeroBased = Math.max(0, line - 1);
      const segment = `A${vlq(0)}${vlq(zeroBased - previous)}A`;
      previous = zeroBased;
      return segment;
    })
    .join(';');
  return { version: 3, file: options.file, sources: [options.file], sourcesContent: [options.source], names: [], mappings };
}
