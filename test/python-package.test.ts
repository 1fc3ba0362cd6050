import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/run-vitest.js';

/** python/vera_agent's own tests (pytest), run with the machine's python3: the host protocol, entries, errors with their stack. */
const pytest = spawnSync('python3', ['-m', 'pytest', '--version'], { encoding: 'utf8' });
const skip = pytest.status !== 0 && process.env.CI !== 'true';

describe.skipIf(skip)('python/vera_agent (pytest)', () => {
  it('its tests pass', () => {
    const out = execFileSync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      cwd: join(REPO, 'python'),
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(out).toMatch(/\b\d+ passed\b/);
    expect(out).not.toMatch(/failed|error/);
  });
});
