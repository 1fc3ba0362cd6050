import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { fillPlaceholders, postInternalNote, postPublicReply } from './conversation.js';
import { actingAgent, addTags, audit, getMacro, getTicket, newId, requireChangeable, ticketArg, tool } from './helpdesk.js';
import { settableStatus, type CrmState, type Macro } from './state.js';

/** Macros: canned replies (or notes) that also set a status and tags, shared by every agent. */

const macroArg = z.string().min(1).describe('Macro id (e.g. mac-3) or exact title');

function macroView(m: Macro) {
  return { id: m.id, title: m.title, body: m.body, public: m.public, setStatus: m.setStatus, addTags: [...m.addTags] };
}

export const macroTools: ToolSpec<CrmState>[] = [
  tool({
    name: 'list_macros',
    description: 'List the macros (canned replies) with their text and what each one changes on the ticket.',
    input: z.object({}),
    handler(state) {
      return { count: state.macros.length, macros: state.macros.map(macroView) };
    },
  }),
  tool({
    name: 'apply_macro',
    description:
      'Apply a macro to a ticket: its text, with placeholders such as {{requester.name}} filled in, is posted as a public reply (emailed to the requester) ' +
      "or as an internal note, and the macro's status and tags are set.",
    input: z.object({ ticket: ticketArg, macro: macroArg }),
    handler(state, args, ctx) {
      const t = getTicket(state, args.ticket);
      const m = getMacro(state, args.macro);
      requireChangeable(t);
      const body = fillPlaceholders(state, t, m.body);
      const comment = m.public ? postPublicReply(state, ctx, t, body) : postInternalNote(state, t, body);
      if (m.setStatus !== null) t.status = m.setStatus;
      addTags(t.tags, m.addTags);
      audit(state, 'ticket.macro', t.id, { macro: m.id, comment: comment.id, public: String(m.public) });
      const sent = m.public ? { sentTo: comment.to } : {};
      return { ticket: t.id, macro: m.id, comment: comment.id, public: m.public, body, ...sent, status: t.status, tags: [...t.tags] };
    },
  }),
  tool({
    name: 'create_macro',
    description: 'Create a macro every agent can apply.',
    input: z.object({
      title: z.string().min(1).describe('Title agents pick the macro by'),
      body: z
        .string()
        .min(1)
        .describe('Text; may use {{ticket.id}}, {{ticket.subject}}, {{requester.name}}, {{requester.email}}, {{customer.name}}, {{agent.name}}'),
      public: z.boolean().optional().describe('Post as a public reply (default true) or as an internal note (false)'),
      set_status: settableStatus.optional().describe('Status the ticket gets: open, pending or solved'),
      add_tags: z.array(z.string().min(1)).optional().describe('Tags the ticket gets'),
    }),
    handler(state, args) {
      actingAgent(state);
      const title = args.title.trim();
      if (state.macros.some((m) => m.title.toLowerCase() === title.toLowerCase())) throw new ToolError(`a macro titled "${title}" already exists`);
      const m: Macro = { id: newId(state, 'mac'), title, body: args.body, public: args.public ?? true, setStatus: args.set_status ?? null, addTags: [] };
      addTags(m.addTags, args.add_tags ?? []);
      state.macros.push(m);
      audit(state, 'macro.create', m.id, { title: m.title });
      return macroView(m);
    },
  }),
  tool({
    name: 'update_macro',
    description: "Change a macro's title, text, visibility, status or tags. Every agent applying it afterwards uses the new version.",
    input: z.object({
      macro: macroArg,
      title: z.string().min(1).optional().describe('New title'),
      body: z.string().min(1).optional().describe('New text'),
      public: z.boolean().optional().describe('Public reply (true) or internal note (false)'),
      set_status: settableStatus.nullable().optional().describe('Status the ticket gets (null: leave the status alone)'),
      add_tags: z.array(z.string().min(1)).optional().describe('Tags the ticket gets (replaces the current list)'),
    }),
    handler(state, args) {
      actingAgent(state);
      const m = getMacro(state, args.macro);
      const changed: string[] = [];
      const change = (field: string, from: string, to: string) => {
        if (from === to) return;
        audit(state, 'macro.update', m.id, { field, from, to });
        changed.push(field);
      };
      if (args.title !== undefined) {
        const clash = state.macros.find((x) => x.id !== m.id && x.title.toLowerCase() === args.title!.trim().toLowerCase());
        if (clash) throw new ToolError(`a macro titled "${clash.title}" already exists (${clash.id})`);
        change('title', m.title, args.title.trim());
        m.title = args.title.trim();
      }
      if (args.body !== undefined) {
        change('body', m.body, args.body);
        m.body = args.body;
      }
      if (args.public !== undefined) {
        change('public', String(m.public), String(args.public));
        m.public = args.public;
      }
      if (args.set_status !== undefined) {
        change('setStatus', m.setStatus ?? 'none', args.set_status ?? 'none');
        m.setStatus = args.set_status;
      }
      if (args.add_tags !== undefined) {
        const tags: string[] = [];
        addTags(tags, args.add_tags);
        change('addTags', m.addTags.join(','), tags.join(','));
        m.addTags = tags;
      }
      return { ...macroView(m), changed };
    },
  }),
];
