import { z } from 'zod';
import { defineOperation, defineStateEnvironment, defineTool, ToolError } from '../../sandbox/environment.js';

/** A tiny environment for gateway and engine tests, independent of the bundled ones. */
const state = z.object({
  notes: z.array(z.object({ id: z.string(), title: z.string(), body: z.string() })),
  outbox: z.array(z.object({ to: z.string(), text: z.string() })),
});
type NotesState = z.infer<typeof state>;

export const notesEnvironment = defineStateEnvironment({
  name: 'notes',
  description: 'Notes and an outbox (test environment).',
  externalChannels: ['post'],
  state,
  initial: () => ({ notes: [], outbox: [] }),
  tools: [
    defineTool<NotesState, z.ZodObject<{}>>({
      name: 'list_notes',
      description: 'List all notes.',
      input: z.object({}),
      handler: (s) => ({ notes: s.notes.map((n) => ({ id: n.id, title: n.title, body: n.body })) }),
    }),
    defineTool({
      name: 'read_note',
      description: 'Read one note.',
      input: z.object({ id: z.string().describe('note id') }),
      handler: (s: NotesState, args) => {
        const note = s.notes.find((n) => n.id === args.id);
        if (!note) throw new ToolError(`no note ${args.id}`);
        return note;
      },
    }),
    defineTool({
      name: 'post',
      description: 'Send text to an address; addresses outside corp.example are external.',
      input: z.object({ to: z.string(), text: z.string() }),
      handler: (s: NotesState, args, ctx) => {
        s.outbox.push({ to: args.to, text: args.text });
        if (!args.to.endsWith('@corp.example')) ctx.egress({ channel: 'post', destination: args.to, content: args.text });
        return { sent: true };
      },
    }),
    defineTool({
      name: 'echo',
      description: 'Returns its text argument verbatim.',
      input: z.object({ text: z.string() }),
      handler: (_s: NotesState, args) => args.text,
    }),
  ],
  operations: [
    defineOperation({
      name: 'add',
      description: 'Add a note.',
      input: z.object({ id: z.string(), title: z.string(), body: z.string() }),
      apply: (s: NotesState, args) => {
        s.notes.push(args);
      },
    }),
  ],
});
