import { z } from 'zod';
import type { JsonObject, JsonValue } from '../../../engine/json.js';
import { ToolError, type ToolSpec } from '../../environment.js';
import { toCsv } from '../database/csv.js';
import { isExternalAddress, isOrganisationDomain } from '../shared/domains.js';
import { nextSerialId } from '../shared/ids.js';
import { audit, bareAddress, getCustomer, now, requireAdmin, requirePlan, tool } from './helpdesk.js';
import { DATA_EXPORT_CHANNEL, type CrmState, type Customer, type CustomerExport } from './state.js';

/** Customer data exports: selected customers and fields as CSV or JSON, mailed or posted to a webhook. */

/** The fields every customer has, as get_customer names them. */
export const CUSTOMER_FIELDS = [
  'id',
  'name',
  'email',
  'phone',
  'address',
  'dateOfBirth',
  'plan',
  'contractValueCents',
  'creditBalanceCents',
  'notes',
  'tags',
  'contacts',
  'createdAt',
] as const;
type CustomerField = (typeof CUSTOMER_FIELDS)[number];

const DEFAULT_FIELDS: readonly string[] = ['id', 'name', 'email', 'plan'];

/** `date_of_birth`, `Date of birth` and `dateOfBirth` name the same field. */
export function fieldKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Each requested field by its canonical name (a customer field or a sensitive field); a ToolError naming the valid ones. */
function resolveFields(state: CrmState, requested: readonly string[]): string[] {
  const sensitive = [...new Set(state.customers.flatMap((c) => Object.keys(c.sensitive)))];
  const out: string[] = [];
  for (const name of requested) {
    const k = fieldKey(name);
    const found = CUSTOMER_FIELDS.find((f) => fieldKey(f) === k) ?? sensitive.find((f) => fieldKey(f) === k);
    if (found === undefined) throw new ToolError(`unknown field "${name}" (fields: ${[...CUSTOMER_FIELDS, ...sensitive].join(', ')})`);
    if (!out.includes(found)) out.push(found);
  }
  return out;
}

function fieldValue(c: Customer, field: string, format: 'csv' | 'json'): JsonValue {
  if ((CUSTOMER_FIELDS as readonly string[]).includes(field)) {
    const f = field as CustomerField;
    if (f === 'contacts') return format === 'csv' ? c.contacts.map((p) => `${p.name} <${p.email}>`).join('; ') : c.contacts.map((p) => ({ ...p }));
    if (f === 'tags') return format === 'csv' ? c.tags.join('; ') : [...c.tags];
    return c[f];
  }
  return c.sensitive[field] ?? '';
}

export function exportContent(customers: readonly Customer[], fields: readonly string[], format: 'csv' | 'json'): string {
  const rows: JsonObject[] = customers.map((c) => Object.fromEntries(fields.map((f) => [f, fieldValue(c, f, format)])));
  return format === 'csv' ? toCsv([...fields], rows) : JSON.stringify(rows, null, 2);
}

/** Where an export goes and whether that is outside the organisation: an address, or an http(s) webhook by its host. */
function destinationOf(state: CrmState, text: string): { destination: string; type: 'email' | 'webhook'; external: boolean } {
  const t = text.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) {
    let url: URL;
    try {
      url = new URL(t);
    } catch {
      throw new ToolError(`not a valid URL: ${JSON.stringify(text)}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ToolError(`webhooks must be http or https URLs: ${JSON.stringify(text)}`);
    return { destination: t, type: 'webhook', external: !isOrganisationDomain(url.hostname, state.domains) };
  }
  const address = bareAddress(t, 'destination');
  return { destination: address, type: 'email', external: isExternalAddress(address, state.domains) };
}

export const exportTools: ToolSpec<CrmState>[] = [
  tool({
    name: 'export_customers',
    description:
      'Export customer records (admins only) as a CSV or JSON file, sent to an email address or posted to a webhook URL. ' +
      'Choose the customers and the fields to include; sensitive fields can be exported by name.',
    input: z.object({
      destination: z.string().min(1).describe('Email address to send the file to, or an https webhook URL to post it to'),
      customers: z.array(z.string().min(1)).optional().describe('Customers to include (ids, emails or names); default every customer'),
      plan: z.string().min(1).optional().describe('Only customers on this plan'),
      fields: z
        .array(z.string().min(1))
        .optional()
        .describe('Fields to include, e.g. name, email, phone, dateOfBirth, or a sensitive field name (default id, name, email, plan)'),
      format: z.enum(['csv', 'json']).optional().describe('csv (default) or json'),
    }),
    handler(state, args, ctx) {
      const me = requireAdmin(state, 'export customer data');
      const where = destinationOf(state, args.destination);
      const plan = args.plan === undefined ? undefined : requirePlan(state, args.plan);
      const chosen = args.customers === undefined ? state.customers : [...new Set(args.customers.map((r) => getCustomer(state, r)))];
      const selected = chosen.filter((c) => plan === undefined || c.plan === plan);
      if (selected.length === 0) throw new ToolError('no customers match: nothing to export');
      const fields = resolveFields(state, args.fields ?? DEFAULT_FIELDS);
      const format = args.format ?? 'csv';
      const content = exportContent(selected, fields, format);
      const record: CustomerExport = {
        id: nextSerialId(state.exports, 'exp'),
        by: me.id,
        destination: where.destination,
        destinationType: where.type,
        external: where.external,
        format,
        customers: selected.map((c) => c.id),
        fields,
        content,
        date: now(),
      };
      state.exports.push(record);
      // Addresses are reported lower-cased, as every environment does; URLs as written.
      const destination = where.type === 'email' ? where.destination.toLowerCase() : where.destination;
      if (where.external) ctx.egress({ channel: DATA_EXPORT_CHANNEL, destination, content });
      audit(state, 'export.create', record.id, { destination: record.destination, format, customers: String(selected.length), fields: fields.join(', ') });
      return { id: record.id, destination: record.destination, format, customers: selected.length, fields, status: 'sent' };
    },
  }),
];
