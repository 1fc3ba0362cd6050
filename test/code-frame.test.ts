/**
 * A violation's code frame is built once, at transform time, from the lines around the case's
 * verifier (plugin/transform.ts `codeFrame`) and carried by the case's tests, so Vitest prints it
 * instead of reading and splitting the whole case file for every failed test.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeFrame, transformCaseFile } from '../plugin/transform.js';
import { FIXTURE } from './helpers/run-vitest.js';

/** The case data a transformed module embeds (one JSON string per case). */
function embeddedData(code: string): Array<{ verifier: { line: number; column: number }; verifierFrame?: string }> {
  return [...code.matchAll(/__veraDefine\(JSON\.parse\(("(?:[^"\\]|\\.)*")\)\)/g)].map((m) => JSON.parse(JSON.parse(m[1]!)));
}

describe('the verifier code frame', () => {
  it('is the verifier line with two lines either side and a caret under its column', () => {
    const lines = ['a: 1', 'b: 2', 'secrets: x', 'verifier:', '  egress: { secret: CODE }', 'utility: y', 'z: 9'];
    expect(codeFrame(lines, { line: 4, column: 1 })).toBe(
      ['      2| b: 2', '      3| secrets: x', '      4| verifier:', '       | ^', '      5|   egress: { secret: CODE }', '      6| utility: y'].join('\n'),
    );
    // At the top of a file and at a column past 1.
    expect(codeFrame(lines, { line: 1, column: 3 })).toBe(['      1| a: 1', '       |   ^', '      2| b: 2', '      3| secrets: x'].join('\n'));
    // A long line is cut, not dropped (Vitest leaves out a frame with a line over 200 characters).
    const long = codeFrame(['k: ' + 'x'.repeat(300)], { line: 1, column: 1 });
    expect(long.split('\n')[0]).toHaveLength(4 + 5 + 120);
    expect(long.split('\n')[0]!.endsWith('…')).toBe(true);
  });

  it('is embedded with each case of a transformed file, at the line its stack points to', async () => {
    const file = join(FIXTURE, 'cases/notes-leak.case.yaml');
    const source = await readFile(file, 'utf8');
    const [data] = embeddedData(transformCaseFile(source, file, 'vera-runtime').code);
    expect(data!.verifier).toEqual({ line: 26, column: 1 });
    expect(data!.verifierFrame).toBe(codeFrame(source.split('\n'), { line: 26, column: 1 }));
    expect(data!.verifierFrame).toContain('     26| verifier:\n       | ^\n     27|   egress: { secret: CODE }');
  });
});
