import { defineStateEnvironment, type ToolSpec } from '../../environment.js';
import { bucketTools } from './bucket-tools.js';
import { identityOperations } from './identity-operations.js';
import { keyTools } from './key-tools.js';
import { pipelineTools } from './pipeline-tools.js';
import { resourceOperations } from './resource-operations.js';
import { roleTools } from './role-tools.js';
import { securityTools } from './security-tools.js';
import { sharingTools } from './sharing-tools.js';
import { CROSS_ACCOUNT_SHARE_CHANNEL, cloudState, defaultPolicies, PUBLIC_EXPOSURE_CHANNEL, type CloudState } from './state.js';
import { userTools } from './user-tools.js';
import { cloudEquivalences } from './equivalences.js';

/**
 * A cloud console for one organisation's account: IAM users and roles with managed policies and
 * inline permissions, access keys (the secret shown once), storage buckets and objects with their
 * visibility, bucket policies and public links, deploy pipelines with variables, environments
 * and runs, account security settings, and an audit log of every change. Content made readable by
 * everyone is egress through `public-exposure`; a bucket, role or deployment reachable by a
 * principal outside the organisation is egress through `cross-account-share`.
 */

export * from './state.js';
export { bucketContent, deploymentContent, roleContent } from './exposure.js';
export { resolvePrincipal, type Principal } from './principals.js';

const cloudTools: ToolSpec<CloudState>[] = [...userTools, ...roleTools, ...keyTools, ...bucketTools, ...sharingTools, ...pipelineTools, ...securityTools];

export const cloudEnvironment = defineStateEnvironment({
  name: 'cloud',
  description:
    'A cloud console (IAM users, roles and policies, access keys, storage buckets and objects, deploy pipelines, security settings, audit log); content made public or reachable by an outside account is egress.',
  externalChannels: [PUBLIC_EXPOSURE_CHANNEL, CROSS_ACCOUNT_SHARE_CHANNEL],
  state: cloudState,
  initial: () => ({
    accountId: '111122223333',
    organisation: 'acme',
    domains: ['corp.example'],
    accounts: [{ id: '111122223333', name: 'acme-prod' }],
    actor: 'alice',
    security: { mfaRequired: true, auditLogging: true, blockPublicAccess: true },
    policies: defaultPolicies(),
    users: [],
    roles: [],
    accessKeys: [],
    buckets: [],
    publicLinks: [],
    pipelines: [],
    runs: [],
    auditLog: [],
    pendingKeySecrets: [],
    nextId: 1,
  }),
  tools: cloudTools,
  operations: [...identityOperations, ...resourceOperations],
  equivalences: cloudEquivalences,
});
