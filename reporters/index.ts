/** `vera-safety/reporters`: Vitest reporters over Vera's test meta. */
export { AsrReporter, collectAsrRows } from './asr-reporter.js';
