/**
 * What Vite pays to parse a transformed case module: the module as Vera emits it (each case's data
 * one `JSON.parse("…")` string) against the same data as object literals, parsed with Vite's
 * `parseAst` (rolldown), mean of 5 after a warm-up. Measures the built package (npm run build first).
 *   npx tsx bench/case-module-parse.ts <file.case.yaml> [more files]
 */
import { readFileSync } from 'node:fs';
import { parseAst } from 'vite';
import { transformCaseFile } from '../dist/plugin/transform.js';

for (const file of process.argv.slice(2)) {
  const { code } = transformCaseFile(readFileSync(file, 'utf8'), file, 'vera-safety/runtime', {});
  const literal = code.replace(/__veraDefine\(JSON\.parse\(("(?:[^"\\]|\\.)*")\)\);$/gm, (_m, text: string) => `__veraDefine(${JSON.parse(text)});`);
  if (literal === code) throw new Error(`${file}: the module has no JSON.parse case data to compare`);
  for (const [label, source] of [
    ['as emitted (strings)', code],
    ['object literals', literal],
  ] as const) {
    parseAst(source);
    const t = performance.now();
    for (let i = 0; i < 5; i++) parseAst(source);
    console.log(
      `${file}  ${label.padEnd(22)} ${(source.length / 1024).toFixed(0).padStart(5)} KB  ${((performance.now() - t) / 5).toFixed(1).padStart(6)} ms per parse`,
    );
  }
}
