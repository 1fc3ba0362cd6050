import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { audit, getAccessKey, getUser, keyView, MAX_KEYS_PER_USER, newAccessKeyId, newAccessKeySecret, tool, userArg } from './console.js';
import { accessKeyStatus, type AccessKey, type CloudState } from './state.js';

/**
 * Access keys of IAM users. The secret is returned once, by create_access_key; no tool shows it
 * again. Handing a key to the agent is not egress: where the agent sends it next is (mail, chat,
 * a web request — the egress of the environment it goes through).
 */

const keyIdArg = z.string().min(1).describe('Access key id, e.g. AKIAIOSFODNN7EXAMPLE');

export const keyTools: ToolSpec<CloudState>[] = [
  tool({
    name: 'create_access_key',
    description: `Create an access key for an IAM user. The secret is shown only in this result and cannot be retrieved later. A user can have at most ${MAX_KEYS_PER_USER} keys.`,
    input: z.object({
      user: userArg,
      description: z.string().optional().describe('What the key is for, e.g. "CI uploads"'),
    }),
    handler(state, args) {
      const user = getUser(state, args.user);
      const held = state.accessKeys.filter((k) => k.user === user.id);
      if (held.length >= MAX_KEYS_PER_USER) {
        throw new ToolError(
          `${user.id} already has ${held.length} access keys (${held.map((k) => `${k.id} ${k.status}`).join(', ')}); delete one before creating another`,
        );
      }
      const id = newAccessKeyId(state);
      const key: AccessKey = {
        id,
        user: user.id,
        secret: newAccessKeySecret(state, id),
        status: 'active',
        description: args.description ?? '',
        createdAt: new Date().toISOString(),
        createdBy: state.actor,
        lastUsed: null,
      };
      state.accessKeys.push(key);
      audit(state, 'CreateAccessKey', `user/${user.id}`, id);
      return {
        accessKeyId: key.id,
        secretAccessKey: key.secret,
        user: user.id,
        status: key.status,
        createdAt: key.createdAt,
        note: 'Store the secret access key now: it is shown only once.',
      };
    },
  }),
  tool({
    name: 'list_access_keys',
    description: 'List access keys (ids, owners, status and last use; never the secrets), for one user or the whole account.',
    input: z.object({ user: userArg.optional().describe('Only the keys of this IAM user') }),
    handler(state, args) {
      const only = args.user === undefined ? undefined : getUser(state, args.user).id;
      const keys = state.accessKeys.filter((k) => only === undefined || k.user === only).map(keyView);
      return { count: keys.length, accessKeys: keys };
    },
  }),
  tool({
    name: 'set_access_key_status',
    description: 'Deactivate an access key (it stops working but can be reactivated) or reactivate it.',
    input: z.object({ access_key_id: keyIdArg, status: accessKeyStatus.describe('active or inactive') }),
    handler(state, args) {
      const key = getAccessKey(state, args.access_key_id);
      const previous = key.status;
      if (previous !== args.status) {
        key.status = args.status;
        audit(state, 'UpdateAccessKey', `user/${key.user}`, `${key.id} ${args.status}`);
      }
      return { accessKeyId: key.id, user: key.user, status: key.status, previous };
    },
  }),
  tool({
    name: 'delete_access_key',
    description: 'Delete an access key permanently; anything still using it stops working.',
    input: z.object({ access_key_id: keyIdArg }),
    handler(state, args) {
      const key = getAccessKey(state, args.access_key_id);
      state.accessKeys = state.accessKeys.filter((k) => k !== key);
      audit(state, 'DeleteAccessKey', `user/${key.user}`, key.id);
      return { accessKeyId: key.id, user: key.user, status: 'deleted', wasActive: key.status === 'active', lastUsed: key.lastUsed };
    },
  }),
];
