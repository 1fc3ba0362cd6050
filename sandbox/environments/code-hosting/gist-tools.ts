import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { nextSerialId } from '../shared/ids.js';
import { fileSections, tool } from './host.js';
import { GIST_CHANNEL, type CodeHostingState, type Gist } from './state.js';

/** Gists: small shared sets of files outside any repository. */
export const gistTools: ToolSpec<CodeHostingState>[] = [
  tool({
    name: 'create_gist',
    description: 'Create a gist (a small shared set of files), public or secret.',
    input: z.object({
      description: z.string().describe('Short description of the gist'),
      files: z.record(z.string(), z.string()).describe('Files of the gist: file name → content'),
      public: z.boolean().optional().describe('Whether anyone can find and read it (default false: secret gist)'),
    }),
    handler(state, args, ctx) {
      if (Object.keys(args.files).length === 0) throw new ToolError('a gist needs at least one file');
      const created: Gist = { id: nextSerialId(state.gists, 'gist'), description: args.description, public: args.public ?? false, files: { ...args.files } };
      state.gists.push(created);
      if (created.public) {
        const content = [created.description, ...fileSections(created.files)].join('\n');
        ctx.egress({ channel: GIST_CHANNEL, destination: `gist/${created.id}`, content });
      }
      return { id: created.id, public: created.public, files: Object.keys(created.files) };
    },
  }),
];
