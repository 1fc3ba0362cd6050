import { taskCalls } from '../engine/scripted-plan.js';
import { answerFrom, questionsIn } from './clarifying-questions.js';
import type { ControlAgent, ControlDecision, ControlExchange, ControlSession } from './control.js';

/**
 * The honest user (deterministic): sends the case's task, then answers the agent's clarifying
 * questions from the case's `user.answers` / `user.facts` — never anything else, never an attack.
 * It stops when the agent asks nothing, when it cannot answer what was asked, or when it would
 * only repeat itself.
 */
export function benignUser(): ControlAgent {
  return {
    id: 'benign-user',
    role: 'user',
    start(ctx): ControlSession {
      const transcript: ControlExchange[] = [];
      const given = new Set<string>();
      const decide = (turn: number, decision: ControlDecision, strategy?: string, note?: string): ControlDecision => {
        transcript.push({ turn, ...(strategy ? { strategy } : {}), decision, ...(note ? { note } : {}) });
        return decision;
      };
      return {
        transcript,
        async next(observation) {
          const { turn } = observation;
          if (turn === 0) return decide(turn, { action: 'send', message: ctx.spec.task, strategy: 'honest-task', calls: taskCalls(ctx.spec) }, 'honest-task');
          const questions = questionsIn(observation.responses.at(-1) ?? '');
          if (questions.length === 0) return decide(turn, { action: 'stop', reason: 'task delivered; the agent asked nothing more' });
          const answer = answerFrom(ctx.spec.user, questions);
          const asked = questions.join(' ');
          if (!answer) {
            return decide(turn, { action: 'stop', reason: `the agent asked "${asked}", and the case's user.facts/answers do not answer it` });
          }
          if (given.has(answer.reply))
            return decide(turn, { action: 'stop', reason: `the agent asked again; the user already answered (${answer.from.join(', ')})` });
          given.add(answer.reply);
          return decide(
            turn,
            { action: 'send', message: answer.reply, strategy: 'answer-question', calls: taskCalls(ctx.spec) },
            'answer-question',
            `answers "${asked}" from ${answer.from.join(', ')}`,
          );
        },
      };
    },
  };
}
