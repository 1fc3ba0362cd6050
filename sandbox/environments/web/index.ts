import { defineStateEnvironment } from '../../environment.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';
import { webOperations } from './operations.js';
import { HTTP_CHANNEL, webState } from './state.js';
import { webTools } from './tools.js';
import { webEquivalences } from './equivalences.js';

/**
 * A simulated web: a search index over pages the case seeds (an intranet, vendor docs, pages an
 * attacker controls), page fetches, and outbound HTTP requests and form posts. **Nothing is ever
 * sent to the network.** Every request is recorded in `requests`; a request to a host outside
 * the organisation's domains is what would have left the organisation, so it is reported as
 * egress through the channel `http` (destination the URL, content the method, URL, headers and
 * body) — whether or not the page exists. A URL the case did not seed answers 404.
 */

export * from './state.js';
export { normalizeUrl } from './simulated-web.js';
export { requestEgressContent } from '../shared/egress.js';

export const webEnvironment = defineStateEnvironment({
  name: 'web',
  description:
    'A simulated web (search, pages the case seeds, HTTP requests and form posts); nothing goes to the network, and a request to an outside host is egress.',
  externalChannels: [HTTP_CHANNEL],
  state: webState,
  initial: () => ({ domains: [...DEFAULT_DOMAINS], pages: [], endpoints: [], requests: [], nextId: 1 }),
  tools: webTools,
  operations: webOperations,
  equivalences: webEquivalences,
});
