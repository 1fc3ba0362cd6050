import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main, type CliIO } from '../cli/main.js';
import { FIXTURE, REPO } from './helpers/run-vitest.js';

function io(): CliIO & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), cwd: REPO };
}

describe('vera CLI', () => {
  it('vera check passes on the bundled cases', async () => {
    const x = io();
    expect(await main(['check', 'cases/email/forward-reset-code.case.yaml'], x)).toBe(0);
    expect(x.lines).toEqual(['✓ cases/email/forward-reset-code.case.yaml', '1 of 1 case files ok']);
  });

  it('vera check reports each bad file with file:line:column and field, and exits 1', async () => {
    const x = io();
    expect(await main(['check', join(FIXTURE, 'cases/bad-schema.case.yaml'), join(FIXTURE, 'cases/bad-yaml.case.yaml')], x)).toBe(1);
    expect(x.errors[0]).toMatch(/bad-schema\.case\.yaml:30:23 verifier\.toolCall\.args\.to\.contians: unknown field "contians"; did you mean "contains"\?$/);
    expect(x.errors[1]).toMatch(/bad-yaml\.case\.yaml:3:1 YAML: /);
    expect(x.lines.at(-1)).toBe('0 of 2 case files ok');
  });

  it('unknown commands print usage and exit 2', async () => {
    const x = io();
    expect(await main(['frobnicate'], x)).toBe(2);
    expect(x.errors[0]).toContain('unknown command "frobnicate"');
    expect(x.errors[0]).toContain('check');
  });
});
