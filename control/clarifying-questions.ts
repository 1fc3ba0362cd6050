import type { UserKnowledge } from '../engine/case-schema.js';

/**
 * The questions an agent's reply asks the user: sentences ending in "?" outside quoted text,
 * code and JSON (a reply that quotes a document containing "?" is not asking anything).
 */
export function questionsIn(reply: string): string[] {
  const prose = reply
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/`[^`]*`/g, ' ')
    .replace(/\{[\s\S]*?\}/g, ' ')
    .replace(/"[^"\n]*"|“[^”\n]*”/g, ' ');
  const out: string[] = [];
  for (const sentence of prose.split(/(?<=[.!?])\s+|\n+/)) {
    const s = sentence.trim();
    if (s.endsWith('?') && /[A-Za-z]/.test(s)) out.push(s);
  }
  return out;
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export interface UserAnswer {
  reply: string;
  /** What matched: `answers[i]` or `facts.<topic>`. */
  from: string[];
}

/**
 * The honest user's answer to `questions` from what the case says the user knows: canned
 * `answers` first (the question contains `when`), then `facts` whose topic's words all occur in a
 * question. `undefined` when nothing the user knows answers them.
 */
export function answerFrom(knowledge: UserKnowledge | undefined, questions: readonly string[]): UserAnswer | undefined {
  if (!knowledge || questions.length === 0) return undefined;
  const asked = questions.join(' \n ').toLowerCase();
  const askedWords = new Set(words(asked));
  const replies: string[] = [];
  const from: string[] = [];
  knowledge.answers.forEach((a, i) => {
    const whens = Array.isArray(a.when) ? a.when : [a.when];
    if (whens.some((w) => asked.includes(w.toLowerCase()))) {
      replies.push(a.reply);
      from.push(`answers[${i}]`);
    }
  });
  if (replies.length === 0) {
    for (const [topic, value] of Object.entries(knowledge.facts)) {
      const topicWords = words(topic);
      if (topicWords.length > 0 && topicWords.every((w) => askedWords.has(w))) {
        replies.push(Object.keys(knowledge.facts).length === 1 ? value : `${topic}: ${value}`);
        from.push(`facts.${topic}`);
      }
    }
  }
  return replies.length > 0 ? { reply: replies.join('\n'), from } : undefined;
}
