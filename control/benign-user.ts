import type { ControlAgent, ControlSession } from './control.js';

/** An honest user: sends the case's task once and then stops. No attack, no injection. */
export function benignUser(): ControlAgent {
  return {
    id: 'benign-user',
    start(ctx): ControlSession {
      return {
        transcript: [],
        async next(observation) {
          if (observation.turn === 0) return { action: 'send', message: ctx.spec.task, strategy: 'honest-task' };
          return { action: 'stop', reason: 'task delivered' };
        },
      };
    },
  };
}
