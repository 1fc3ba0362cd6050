import { VeraError } from './errors.js';

/**
 * Errors that make a run unjudgeable. A verifier must never quietly turn a broken reference into
 * `false`: under `not` it would become an always-true predicate.
 */

/** The verifier cannot be evaluated; `at` is the place in the predicate tree (`verifier.all[0].state`). */
export class VerifierError extends VeraError {
  constructor(
    readonly at: string,
    message: string,
  ) {
    super('VERIFIER_INVALID', `${at}: ${message}`);
    this.name = 'VerifierError';
  }
}

/**
 * A value a condition needs is not there (a `fromInitial` path that names nothing, a capture that
 * finds nothing, an operand that is not a number). Thrown by value matching, which does not know
 * where in the predicate it is; the verifier rethrows it as a `VerifierError` with the location.
 */
export class OperandError extends VeraError {
  constructor(message: string) {
    super('OPERAND_MISSING', message);
    this.name = 'OperandError';
  }
}
