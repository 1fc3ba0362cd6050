/** What the naive policy must do on every case: the gates of docs/library.md — the same rule `vera compile` keeps a case by. */
export { naiveGateProblems as naiveProblems } from '../pipeline/compile/dry-run.js';
