import { ControlError, type ControlAgent, type ControlSession } from './control.js';

/**
 * Sends the case's `attack.messages` one per turn: deterministic, no model needed. In the
 * multi-channel model, a case without messages opens with the honest task and lets its
 * injections do the attacking.
 */
export function scriptedAdversary(): ControlAgent {
  return {
    id: 'scripted-adversary',
    start(ctx): ControlSession {
      const scripted = ctx.spec.attack.messages;
      let messages: string[];
      if (scripted && scripted.length > 0) messages = scripted;
      else if (ctx.threatModel === 'multi-channel') messages = [ctx.spec.task];
      else {
        throw new ControlError(
          `case ${ctx.spec.id} has no attack.messages for the scripted adversary in "${ctx.threatModel}"; add attack.messages or configure an LLM adversary (control: { adversary: { model } })`,
        );
      }
      return {
        transcript: [],
        async next(observation) {
          const message = messages[observation.turn];
          if (message === undefined) return { action: 'stop', reason: 'script exhausted' };
          return { action: 'send', message, strategy: 'scripted' };
        },
      };
    },
  };
}
