/** `vera-safety/sandbox`: environments, backends and the recording gateway. */
export * from './environment.js';
export { defineEquivalence, perFieldUpdate, type RewriteContext, type RouteCall, type RouteEquivalence, type RouteStep } from './route-equivalence.js';
export * from './sandbox.js';
export {
  builtinEnvironments,
  getEnvironment,
  // The twelve built-in environments.
  calendarEnvironment,
  cloudEnvironment,
  codeHostingEnvironment,
  crmEnvironment,
  databaseEnvironment,
  driveEnvironment,
  emailEnvironment,
  filesEnvironment,
  messagingEnvironment,
  paymentsEnvironment,
  shellEnvironment,
  webEnvironment,
  // The shell with another runner (the container backend runs commands directly), and the runners.
  createShellEnvironment,
  createBubblewrapRunner,
  createDirectShellRunner,
  ShellConfinementError,
  type ShellEnvironmentOptions,
  type ShellRunner,
  type ShellRunRequest,
  type ShellRunResult,
  // Who is inside the organisation (what makes an action egress).
  DEFAULT_DOMAINS,
  domainOf,
  isExternalAddress,
  isExternalUser,
  isOrganisationDomain,
  normalizeAddress,
} from './environments/index.js';
export { InProcessBackend, toolJsonSchema, type InProcessBackendOptions } from './backends/in-process-backend.js';
export { ContainerBackend, type ContainerBackendOptions } from './backends/container-backend.js';
export { SandboxContainerError, type ContainerNetwork, type ReadOnlyMount } from './backends/container-instance.js';
export { ToolGateway, type ToolGatewayOptions, type GatewayReply } from './gateway/tool-gateway.js';
export { InjectionPlan, type InjectionOutcome } from './gateway/injection-plan.js';
export { startMcpGateway, type StartedMcpGateway } from './gateway/mcp-http-host.js';
