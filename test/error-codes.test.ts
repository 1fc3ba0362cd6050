import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentError } from '../adapters/adapter.js';
import { ControlError } from '../control/control.js';
import { CaseFileError } from '../engine/case-loader.js';
import { ERROR_CODES, errorEntry, isVeraError, type VeraError } from '../engine/errors.js';
import { PathSyntaxError } from '../engine/paths.js';
import { OperandError, VerifierError } from '../engine/verifier-error.js';
import { ModelCallError } from '../pipeline/llm/json-model.js';
import { InitScriptError } from '../sandbox/sandbox.js';
import { ToolError } from '../sandbox/environment.js';
import { REPO } from './helpers/run-vitest.js';

/** One error type with stable codes (engine/errors.ts), documented in docs/architecture.md. */
describe('error codes', () => {
  it('docs/architecture.md lists every code with its meaning, and no other', () => {
    const doc = readFileSync(join(REPO, 'docs/architecture.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([A-Z_]+)` \| (.+) \|$/gm)].map((m) => [m[1]!, m[2]!]);
    expect(Object.fromEntries(rows)).toEqual(ERROR_CODES);
  });

  it("each kind of error carries its own code, and a record keeps the error's name, code and detail", () => {
    const made: Array<[VeraError, string]> = [
      [new AgentError('crashed', 'stderr tail'), 'AGENT_FAILED'],
      [new ControlError('no task'), 'CONTROL_FAILED'],
      [new CaseFileError([{ file: 'a.case.yaml', line: 1, column: 1, field: 'id', message: 'missing' }]), 'CASE_INVALID'],
      [new PathSyntaxError('a[', 1, 'unclosed'), 'PATH_INVALID'],
      [new VerifierError('verifier.all[0]', 'no such secret'), 'VERIFIER_INVALID'],
      [new OperandError('not a number'), 'OPERAND_MISSING'],
      [new ModelCallError('down'), 'MODEL_CALL_FAILED'],
      [new InitScriptError(2, 'email.deliver', 'subject: required'), 'INIT_STEP_FAILED'],
      [new ToolError('no such file'), 'TOOL_FAILED'],
    ];
    for (const [error, code] of made) {
      expect(isVeraError(error), error.name).toBe(true);
      expect(error.code).toBe(code);
    }
    expect(errorEntry(made[0]![0], 'HARNESS_FAILED')).toEqual({ kind: 'AgentError', code: 'AGENT_FAILED', message: 'crashed', detail: 'stderr tail' });
    // An error of the user's own code has no code: it gets the one the caller knows (the stage's).
    // It keeps its stack (where in the user's code it was thrown); a Vera error above does not need one.
    const userError = errorEntry(new TypeError('x is undefined'), 'AGENT_FAILED');
    expect(userError).toEqual({ kind: 'TypeError', code: 'AGENT_FAILED', message: 'x is undefined', stack: expect.stringContaining('error-codes.test.ts:') });
    expect(userError.stack!.split('\n').length).toBeLessThanOrEqual(12);
    // A code that is not Vera's is not taken for one (an errno, an HTTP client's).
    expect(isVeraError(Object.assign(new Error('no such file'), { code: 'ENOENT' }))).toBe(false);
  });
});
