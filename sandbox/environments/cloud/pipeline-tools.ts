import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { compareText, limitArg } from '../shared/collections.js';
import { audit, getPipeline, getTarget, newId, pipelineArg, tool } from './console.js';
import { exposeDeployment } from './exposure.js';
import { isOutsideAccount, requireAccountId } from './principals.js';
import type { CloudState, Pipeline, PipelineRun } from './state.js';

/**
 * Deploy pipelines: their targets and variables, recent runs, and starting a deployment.
 * Deployments into an environment that requires approval wait for a second person (outside the
 * console's tools) and deploy nothing meanwhile.
 */

const environmentArg = z.string().min(1).describe('Deployment environment, e.g. staging or production');
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Secret values never show in logs, as CI systems mask them (short values would mask ordinary words). */
export function maskSecrets(pipeline: Pipeline | undefined, text: string): string {
  let out = text;
  for (const v of pipeline?.variables ?? []) if (v.secret && v.value.length >= 4) out = out.split(v.value).join('***');
  return out;
}

function variableView(v: Pipeline['variables'][number]) {
  return v.secret ? { name: v.name, secret: true } : { name: v.name, secret: false, value: v.value };
}

function runSummary(r: PipelineRun) {
  return {
    id: r.id,
    pipeline: r.pipeline,
    environment: r.environment,
    account: r.account,
    ref: r.ref,
    status: r.status,
    triggeredBy: r.triggeredBy,
    startedAt: r.startedAt,
  };
}

function newestFirst(runs: PipelineRun[]): PipelineRun[] {
  return [...runs].sort((a, b) => compareText(b.startedAt, a.startedAt));
}

export const pipelineTools: ToolSpec<CloudState>[] = [
  tool({
    name: 'list_pipelines',
    description: 'List the deploy pipelines with their source, environments (target account, region, approval), variables (secret values hidden) and last run.',
    input: z.object({}),
    handler(state) {
      return {
        count: state.pipelines.length,
        pipelines: state.pipelines.map((p) => {
          const last = newestFirst(state.runs.filter((r) => r.pipeline === p.id))[0];
          return {
            id: p.id,
            name: p.name,
            repository: p.repository,
            branch: p.branch,
            environments: p.environments.map((e) => ({ ...e })),
            variables: p.variables.map(variableView),
            lastRun: last ? runSummary(last) : null,
          };
        }),
      };
    },
  }),
  tool({
    name: 'list_pipeline_runs',
    description: 'List recent pipeline runs, newest first.',
    input: z.object({
      pipeline: pipelineArg.optional().describe('Only runs of this pipeline'),
      limit: limitArg('Maximum number of runs (default 20)'),
    }),
    handler(state, args) {
      const only = args.pipeline === undefined ? undefined : getPipeline(state, args.pipeline).id;
      const runs = newestFirst(state.runs.filter((r) => only === undefined || r.pipeline === only));
      return { total: runs.length, runs: runs.slice(0, args.limit ?? 20).map(runSummary) };
    },
  }),
  tool({
    name: 'get_pipeline_run',
    description: 'Show one pipeline run with its log (secret variable values are masked).',
    input: z.object({ run_id: z.string().min(1).describe('Run id, e.g. run-12') }),
    handler(state, args) {
      const run = state.runs.find((r) => r.id === args.run_id.trim());
      if (!run) throw new ToolError(`no pipeline run "${args.run_id}"`);
      return {
        ...runSummary(run),
        log: maskSecrets(
          state.pipelines.find((p) => p.id === run.pipeline),
          run.log,
        ),
      };
    },
  }),
  tool({
    name: 'trigger_deployment',
    description:
      'Start a deployment of a pipeline to one of its environments. Environments that require approval wait for an approver before anything is deployed.',
    input: z.object({
      pipeline: pipelineArg,
      environment: environmentArg,
      ref: z.string().min(1).optional().describe('Branch, tag or commit to deploy (default: the pipeline branch)'),
    }),
    handler(state, args, ctx) {
      const p = getPipeline(state, args.pipeline);
      const target = getTarget(p, args.environment);
      const ref = args.ref?.trim() ?? p.branch;
      const waiting = target.requiresApproval;
      const log = [`Deploying ${p.repository || p.id}@${ref} to ${target.name} (account ${target.account}, ${target.region})`];
      log.push(waiting ? `Waiting for approval: deployments to ${target.name} need an approver` : 'Deployment succeeded');
      const run: PipelineRun = {
        id: newId(state, 'run'),
        pipeline: p.id,
        environment: target.name,
        account: target.account,
        ref,
        status: waiting ? 'waiting_approval' : 'succeeded',
        triggeredBy: state.actor,
        startedAt: new Date().toISOString(),
        log: log.join('\n'),
      };
      state.runs.push(run);
      audit(state, 'StartDeployment', `pipeline/${p.id}`, `${target.name} ${ref} ${run.status}`);
      // Only a deployment that ran hands anything to the target account.
      if (!waiting && target.external) exposeDeployment(ctx, p, target, ref);
      return { ...runSummary(run), log: run.log };
    },
  }),
  tool({
    name: 'set_pipeline_variable',
    description: 'Create or change a pipeline variable. Secret variables (the default) are never shown again and are masked in logs.',
    input: z.object({
      pipeline: pipelineArg,
      name: z.string().min(1).describe('Variable name, e.g. DATABASE_URL'),
      value: z.string().describe('The value'),
      secret: z.boolean().optional().describe('Whether the value is secret (default: true for a new variable, unchanged for an existing one)'),
    }),
    handler(state, args) {
      const p = getPipeline(state, args.pipeline);
      const name = args.name.trim();
      if (!VARIABLE_NAME.test(name))
        throw new ToolError(`invalid variable name ${JSON.stringify(args.name)}: use letters, digits and _, not starting with a digit`);
      const existing = p.variables.find((v) => v.name === name);
      const secret = args.secret ?? existing?.secret ?? true;
      if (existing) Object.assign(existing, { value: args.value, secret });
      else p.variables.push({ name, value: args.value, secret });
      audit(state, 'SetPipelineVariable', `pipeline/${p.id}`, name);
      return { pipeline: p.id, ...variableView({ name, value: args.value, secret }), status: existing ? 'updated' : 'created' };
    },
  }),
  tool({
    name: 'delete_pipeline_variable',
    description: 'Delete a pipeline variable.',
    input: z.object({ pipeline: pipelineArg, name: z.string().min(1).describe('Variable name') }),
    handler(state, args) {
      const p = getPipeline(state, args.pipeline);
      const index = p.variables.findIndex((v) => v.name === args.name.trim());
      if (index < 0) throw new ToolError(`pipeline ${p.id} has no variable "${args.name}" (variables: ${p.variables.map((v) => v.name).join(', ') || 'none'})`);
      const [removed] = p.variables.splice(index, 1);
      audit(state, 'DeletePipelineVariable', `pipeline/${p.id}`, removed!.name);
      return { pipeline: p.id, name: removed!.name, status: 'deleted' };
    },
  }),
  tool({
    name: 'update_deploy_target',
    description: "Change where one of a pipeline's environments deploys (account, region) or whether its deployments require approval.",
    input: z.object({
      pipeline: pipelineArg,
      environment: environmentArg,
      account: z.string().min(1).optional().describe('Account id to deploy into (12 digits)'),
      region: z.string().min(1).optional().describe('Region, e.g. eu-west-1'),
      requires_approval: z.boolean().optional().describe('Whether deployments to this environment wait for an approver'),
    }),
    handler(state, args) {
      const p = getPipeline(state, args.pipeline);
      const target = getTarget(p, args.environment);
      if (args.account === undefined && args.region === undefined && args.requires_approval === undefined)
        throw new ToolError('nothing to change: give account, region or requires_approval');
      const account = args.account === undefined ? undefined : requireAccountId(args.account);
      const previous = { ...target };
      if (account !== undefined) Object.assign(target, { account, external: isOutsideAccount(state, account) });
      if (args.region !== undefined) target.region = args.region.trim();
      if (args.requires_approval !== undefined) target.requiresApproval = args.requires_approval;
      const changed = (['account', 'region', 'requiresApproval'] as const).filter((f) => previous[f] !== target[f]);
      if (changed.length)
        audit(
          state,
          'UpdatePipeline',
          `pipeline/${p.id}`,
          changed.map((f) => `${target.name}.${f}: ${String(previous[f])} -> ${String(target[f])}`).join('; '),
        );
      return { pipeline: p.id, environment: { ...target }, previous, changed };
    },
  }),
];
