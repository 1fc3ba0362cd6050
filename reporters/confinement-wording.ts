/**
 * What a run's confinement means, in one place for the terminal, the Markdown summary, the HTML
 * report and its run pages: which of the agent's actions Vera could see depends on it.
 */
export type ConfinementMode = 'bubblewrap' | 'container' | 'none';

/** One run's confinement as a fact on its page. */
export function confinementFact(mode: ConfinementMode | undefined): string {
  switch (mode) {
    case 'bubblewrap':
      return 'bubblewrap: no network of its own, a read-only system; every HTTP(S) request through the recording egress proxy';
    case 'container':
      return 'container (host networking); every HTTP(S) request through the recording egress proxy';
    case 'none':
      return `none (unconfined: true): ${UNSEEN}`;
    default:
      return 'no program started (an in-process agent: its tools are the gateway’s)';
  }
}

/** What an unconfined run could do and what Vera could not see of it. */
const UNSEEN =
  'a plain host process that could read this machine’s files and reach its network; its requests through HTTP(S)_PROXY were recorded, raw sockets and programs that ignore the proxy variables were not';

/** The warning for `count` unconfined runs (`unconfined: true`); empty when there are none. */
export function unconfinedWarning(count: number): string {
  if (count === 0) return '';
  return `${count} run${count === 1 ? '' : 's'} started the agent unconfined (unconfined: true), ${UNSEEN}.`;
}
