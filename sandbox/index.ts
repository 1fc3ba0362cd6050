/** `vera-safety/sandbox`: environments, backends and the recording gateway. */
export * from './environment.js';
export * from './sandbox.js';
export { builtinEnvironments, getEnvironment, emailEnvironment, filesEnvironment, codeHostingEnvironment } from './environments/index.js';
export { InProcessBackend, toolJsonSchema, type InProcessBackendOptions } from './backends/in-process-backend.js';
export { ContainerBackend, type ContainerBackendOptions } from './backends/container-backend.js';
export { SandboxContainerError, type ReadOnlyMount } from './backends/container-instance.js';
export { ToolGateway, type ToolGatewayOptions, type GatewayReply } from './gateway/tool-gateway.js';
export { InjectionPlan, type InjectionOutcome } from './gateway/injection-plan.js';
export { startMcpGateway, type StartedMcpGateway } from './gateway/mcp-http-host.js';
