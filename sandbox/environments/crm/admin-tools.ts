import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { limitArg } from '../shared/collections.js';
import { actingAgent, audit, bareAddress, getAgent, requireAdmin, sameAddress, tool } from './helpdesk.js';
import { agentRole, type CrmState, type SupportAgent } from './state.js';

/** The support team: who has an agent account, with which role, and the audit log of what everyone did. */

const agentArg = z.string().min(1).describe('Agent id or email address');

function agentView(a: SupportAgent) {
  return { id: a.id, name: a.name, email: a.email, role: a.role, active: a.active };
}

/** A login id from an address's local part, made unique among the agents. */
function agentIdFor(state: CrmState, email: string): string {
  const base =
    email
      .slice(0, email.indexOf('@'))
      .toLowerCase()
      .replace(/[^a-z0-9._-]/g, '') || 'agent';
  let id = base;
  for (let n = 2; state.agents.some((a) => a.id === id); n++) id = `${base}-${n}`;
  return id;
}

export const adminTools: ToolSpec<CrmState>[] = [
  tool({
    name: 'list_support_agents',
    description: 'List the support team: every agent account with its role (agent or admin) and whether it is active.',
    input: z.object({}),
    handler(state) {
      return { you: state.actor, count: state.agents.length, agents: state.agents.map(agentView) };
    },
  }),
  tool({
    name: 'add_support_agent',
    description:
      'Create a support agent account (admins only). Agents can read every customer and ticket; admins can also export data, delete customers and manage the team.',
    input: z.object({
      name: z.string().min(1).describe("The person's full name"),
      email: z.string().min(1).describe('Email address they sign in with'),
      role: agentRole.optional().describe('agent (default) or admin'),
    }),
    handler(state, args) {
      requireAdmin(state, 'add support agents');
      const email = bareAddress(args.email);
      const existing = state.agents.find((a) => sameAddress(a.email, email));
      if (existing) throw new ToolError(`${email} already has an agent account (${existing.id})`);
      const agent: SupportAgent = { id: agentIdFor(state, email), name: args.name.trim(), email, role: args.role ?? 'agent', active: true };
      state.agents.push(agent);
      audit(state, 'agent.add', agent.id, { email, role: agent.role });
      return agentView(agent);
    },
  }),
  tool({
    name: 'set_agent_role',
    description: "Change a support agent's role to agent or admin (admins only).",
    input: z.object({ agent: agentArg, role: agentRole.describe('agent or admin') }),
    handler(state, args) {
      const me = requireAdmin(state, 'change roles');
      const agent = getAgent(state, args.agent);
      if (agent.id === me.id) throw new ToolError('you cannot change your own role');
      if (!agent.active) throw new ToolError(`agent ${agent.id} is deactivated`);
      if (agent.role === args.role) throw new ToolError(`${agent.id} is already ${args.role === 'admin' ? 'an admin' : 'an agent'}`);
      audit(state, 'agent.role_change', agent.id, { field: 'role', from: agent.role, to: args.role });
      const previous = agent.role;
      agent.role = args.role;
      return { ...agentView(agent), previous };
    },
  }),
  tool({
    name: 'deactivate_support_agent',
    description: "Deactivate a support agent's account so they can no longer sign in (admins only). Their tickets stay assigned.",
    input: z.object({ agent: agentArg }),
    handler(state, args) {
      const me = requireAdmin(state, 'deactivate agents');
      const agent = getAgent(state, args.agent);
      if (agent.id === me.id) throw new ToolError('you cannot deactivate your own account');
      if (!agent.active) throw new ToolError(`agent ${agent.id} is already deactivated`);
      agent.active = false;
      audit(state, 'agent.deactivate', agent.id, { email: agent.email });
      return agentView(agent);
    },
  }),
  tool({
    name: 'list_audit_log',
    description: 'Show the audit log of actions taken in the support desk, newest first, optionally for one actor or one target.',
    input: z.object({
      actor: z.string().min(1).optional().describe('Only actions by this agent id'),
      target: z.string().min(1).optional().describe('Only actions on this id (customer, ticket, agent, macro or export)'),
      limit: limitArg('Maximum number of entries (default 50)'),
    }),
    handler(state, args) {
      actingAgent(state);
      const found = state.auditLog.filter(
        (e) => (args.actor === undefined || e.actor === args.actor.trim()) && (args.target === undefined || e.target === args.target.trim()),
      );
      // Newest first by date; entries of the same time, latest recorded first.
      const newest = [...found].reverse().sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
      return { total: found.length, entries: newest.slice(0, args.limit ?? 50).map((e) => ({ ...e, details: { ...e.details } })) };
    },
  }),
];
