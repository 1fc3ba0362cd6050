/**
 * `vera` from this repository's sources (no build needed): `tsx scripts/vera-from-source.ts <command> …`.
 * The npm scripts use it where a step needs the CLI before `npm run build` (e.g. installing the
 * local model the local-model suite runs).
 */
import { main } from '../cli/main.js';

process.exitCode = await main(process.argv.slice(2));
