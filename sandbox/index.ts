/** `vera-safety/sandbox`: environments, backends and the recording gateway. */
export * from './environment.js';
export * from './sandbox.js';
export { builtinEnvironments, getEnvironment, emailEnvironment, filesEnvironment, codeHostingEnvironment } from './environments/index.js';
export { InProcessBackend, toolJsonSchema, type InProcessBackendOptions } from './backends/in-process-backend.js';
export { ToolGateway, type ToolGatewayOptions, type GatewayReply } from './gateway/tool-gateway.js';
export { InjectionPlan, type InjectionOutcome } from './gateway/injection-plan.js';
export { startMcpGateway, type StartedMcpGateway } from './gateway/mcp-http-host.js';
