import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EnvironmentDefinition } from '../sandbox/environment.js';
import { codeHostingEnvironment } from '../sandbox/environments/code-hosting/index.js';
import { isExternalAddress, isExternalUser, normalizeAddress } from '../sandbox/environments/shared/domains.js';
import { emailEnvironment } from '../sandbox/environments/email/index.js';
import { filesEnvironment } from '../sandbox/environments/files/index.js';
import { BUILTIN_ENVIRONMENT_NAMES, loadBuiltinEnvironment } from '../sandbox/environments/builtin-loaders.js';
import { builtinEnvironments, getEnvironment } from '../sandbox/environments/index.js';
import { removeTempDirs } from './helpers/environment-harness.js';

afterEach(removeTempDirs);

const allEnvironments = Object.values(builtinEnvironments) as EnvironmentDefinition<any>[];

// ---------------------------------------------------------------------------------------------
// Registry and schemas

describe('environment registry and schemas', () => {
  it('the lazy loaders cover exactly the built-in environments, each loading the same object, and nothing else', async () => {
    expect(BUILTIN_ENVIRONMENT_NAMES).toEqual(Object.keys(builtinEnvironments).sort());
    for (const name of BUILTIN_ENVIRONMENT_NAMES) expect(await loadBuiltinEnvironment(name)).toBe(builtinEnvironments[name]);
    expect(loadBuiltinEnvironment('nope')).toBeUndefined();
    expect(loadBuiltinEnvironment('constructor')).toBeUndefined();
  });

  it('exports the twelve environments keyed by name', () => {
    expect(Object.keys(builtinEnvironments).sort()).toEqual([
      'calendar',
      'cloud',
      'code-hosting',
      'crm',
      'database',
      'drive',
      'email',
      'files',
      'messaging',
      'payments',
      'shell',
      'web',
    ]);
    for (const [name, def] of Object.entries(builtinEnvironments)) expect(def.name).toBe(name);
    expect(getEnvironment('email')).toBe(emailEnvironment);
    expect(getEnvironment('code-hosting')).toBe(codeHostingEnvironment);
  });

  it('getEnvironment names the known environments when the name is unknown', () => {
    expect(() => getEnvironment('spreadsheet')).toThrow(
      /unknown environment "spreadsheet".*calendar, cloud, code-hosting, crm, database, drive, email, files, messaging, payments, shell, web/,
    );
    expect(() => getEnvironment('toString')).toThrow(/unknown environment/);
  });

  it('declares the external channels', () => {
    expect(emailEnvironment.externalChannels).toEqual(['email']);
    expect(filesEnvironment.externalChannels).toEqual(['file-share']);
    expect(codeHostingEnvironment.externalChannels).toEqual(['public-repo', 'gist']);
    expect(builtinEnvironments.messaging!.externalChannels).toEqual(['messaging']);
    expect(builtinEnvironments.payments!.externalChannels).toEqual(['bank-transfer']);
    expect(builtinEnvironments.web!.externalChannels).toEqual(['http']);
    expect(builtinEnvironments.calendar!.externalChannels).toEqual(['calendar-invite']);
    expect(builtinEnvironments.database!.externalChannels).toEqual(['data-export']);
    // The simulated shell's curl and wget are recorded as http egress (bubblewrap has no network).
    expect(builtinEnvironments.shell!.externalChannels).toEqual(['http']);
  });

  it('has unique snake_case tool names across all environments', () => {
    const names = allEnvironments.flatMap((d) => d.tools.map((t) => t.name));
    expect(names.length).toBeGreaterThan(75);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
  });

  it('has operation names that init steps can address and unique per environment', () => {
    for (const def of allEnvironments) {
      const names = def.operations.map((o) => o.name);
      expect(new Set(names).size).toBe(names.length);
      for (const name of names) expect(`${def.name}.${name}`).toMatch(/^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_]*$/);
    }
  });

  it('converts every tool and operation input to JSON Schema, with a description on every tool field', () => {
    let checked = 0;
    for (const def of allEnvironments) {
      for (const spec of [...def.tools, ...def.operations]) {
        const schema = z.toJSONSchema(spec.input) as { type: string; properties?: Record<string, { description?: string }> };
        // The form the gateway publishes: input side, draft-7.
        expect(() => z.toJSONSchema(spec.input, { target: 'draft-7', io: 'input' })).not.toThrow();
        expect(schema.type).toBe('object');
        expect(spec.description.length).toBeGreaterThan(10);
        for (const [field, prop] of Object.entries(schema.properties ?? {})) {
          expect(prop.description, `${def.name}/${spec.name}.${field}`).toBeTruthy();
        }
        checked++;
      }
    }
    expect(checked).toBe(allEnvironments.reduce((n, d) => n + d.tools.length + d.operations.length, 0));
  });
});

describe('domains', () => {
  it('tells organisation addresses from external ones', () => {
    const org = ['corp.example'];
    expect(isExternalAddress('bob@corp.example', org)).toBe(false);
    expect(isExternalAddress('Bob <BOB@Corp.Example>', org)).toBe(false);
    expect(isExternalAddress('eve@eu.corp.example', org)).toBe(false);
    expect(isExternalAddress('eve@evil.example', org)).toBe(true);
    expect(isExternalAddress('eve@corp.example.evil.example', org)).toBe(true);
    expect(isExternalAddress('eve@notcorp.example', org)).toBe(true);
    expect(isExternalAddress('not an address', org)).toBe(true);
    expect(normalizeAddress('Bob <Bob@Corp.Example>')).toBe('bob@corp.example');
    expect(normalizeAddress('bob')).toBeUndefined();
  });

  it('tells organisation members from outside users', () => {
    expect(isExternalUser('Alice', ['alice', 'bob'])).toBe(false);
    expect(isExternalUser('mallory', ['alice', 'bob'])).toBe(true);
    expect(isExternalUser('carol@corp.example', ['alice'], ['corp.example'])).toBe(false);
  });
});
