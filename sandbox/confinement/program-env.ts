/**
 * The environment a program under test starts with: never the test process's own (API keys,
 * cloud credentials, tokens live there — one injected `env | curl` away), only an allow-list of
 * harmless locale and terminal settings plus what the caller passes explicitly (the adapter's
 * model key, its config home).
 */

export const PROGRAM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Variables copied from the host when set: they change formatting, never reach anything. */
const PASSED_THROUGH = ['LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TZ', 'TERM', 'NO_COLOR', 'FORCE_COLOR', 'COLORTERM'];

/**
 * `explicit` over a minimal base: PATH (the system directories), HOME and TMPDIR (the caller
 * gives the real ones), and the pass-through settings the host has.
 */
export function programEnv(explicit: Record<string, string> = {}, base: { home?: string; tmp?: string } = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: PROGRAM_PATH, HOME: base.home ?? base.tmp ?? '/tmp', TMPDIR: base.tmp ?? '/tmp', LANG: 'C.UTF-8' };
  for (const name of PASSED_THROUGH) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...explicit };
}
