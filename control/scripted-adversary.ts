import { messageCalls, taskCalls } from '../engine/scripted-plan.js';
import { ControlError, type ControlAgent, type ControlDecision, type ControlExchange, type ControlSession } from './control.js';

/**
 * Sends the case's `attack.messages` one per turn: deterministic, no model needed (the seed changes
 * nothing). In the multi-channel model the adversary controls tool results too, so it opens with
 * the honest task as cover — that is what makes the agent call the tools whose results carry the
 * injections — and then sends its messages.
 */
export function scriptedAdversary(): ControlAgent {
  return {
    id: 'scripted-adversary',
    role: 'adversary',
    start(ctx): ControlSession {
      const scripted = ctx.spec.attack.messages ?? [];
      let messages: string[];
      if (ctx.threatModel === 'multi-channel') messages = [ctx.spec.task, ...scripted];
      else if (scripted.length > 0) messages = scripted;
      else {
        throw new ControlError(
          `case ${ctx.spec.id} has no attack.messages for the scripted adversary in "${ctx.threatModel}"; add attack.messages or configure an LLM adversary (adversary: { type: 'llm', model })`,
        );
      }
      const transcript: ControlExchange[] = [];
      return {
        transcript,
        async next(observation) {
          const message = messages[observation.turn];
          const cover = observation.turn === 0 && ctx.threatModel === 'multi-channel';
          const strategy = cover ? 'cover-task' : 'scripted';
          // What a scripted agent does with it: the task for the cover message, else the n-th message's plan.
          const calls = cover ? taskCalls(ctx.spec) : messageCalls(ctx.spec, observation.turn - (ctx.threatModel === 'multi-channel' ? 1 : 0));
          const decision: ControlDecision =
            message === undefined ? { action: 'stop', reason: 'script exhausted' } : { action: 'send', message, strategy, calls };
          transcript.push({ turn: observation.turn, ...(decision.action === 'send' ? { strategy } : {}), decision });
          return decision;
        },
      };
    },
  };
}
