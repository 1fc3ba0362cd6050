/**
 * Entry point of the bundled sandbox server (`/opt/vera/sandbox-server.mjs` in the image).
 * Configuration comes from the environment (`SERVER_ENV` in protocol.ts); once it listens it
 * prints one ready line with its port (or socket), which the host waits for.
 *
 * `sandbox-server.mjs relay` runs the exec-stream relay instead (stream-relay.ts): the same file,
 * so an image always holds a relay of its own protocol.
 */
import { READY_PREFIX, RELAY_ARG, SANDBOX_PROTOCOL, SERVER_ENV } from './protocol.js';

// Each mode loads only its own modules (esbuild evaluates a dynamically imported part of the
// bundle on first import): the relay starts in ~0.1 s instead of paying ~0.3 s for the
// environments it never uses, and it starts once per container on the exec-stream channel.
async function serverMain(): Promise<void> {
  const { SandboxServer } = await import('./sandbox-server.js');
  const { containerEnvironments } = await import('./container-environments.js');
  const port = Number(process.env[SERVER_ENV.port] ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`vera-sandbox: ${SERVER_ENV.port}=${process.env[SERVER_ENV.port]} is not a port number`);
    process.exit(2);
  }

  const workspaceRoot = process.env[SERVER_ENV.workspaceRoot] ?? '/workspace';
  const socket = process.env[SERVER_ENV.socket] || undefined;
  const server = new SandboxServer({
    ...(process.env[SERVER_ENV.token] ? { token: process.env[SERVER_ENV.token] } : {}),
    port,
    ...(socket ? { socket } : {}),
    workspaceRoot,
    environments: containerEnvironments(),
    ownsProcessNamespace: process.env[SERVER_ENV.inContainer] === '1',
    // Per-container scratch space (tmpfs under the backend's read-only root): emptied on reset.
    // The workspace root too: a command may write next to its workspace (`../x`) there.
    scratchDirs: process.env[SERVER_ENV.inContainer] === '1' ? [workspaceRoot, '/tmp', process.env.HOME ?? '/root'] : [],
  });

  const listening = await server.listen();
  console.log(`${READY_PREFIX}${JSON.stringify({ port: listening, ...(socket ? { socket } : {}), protocol: SANDBOX_PROTOCOL })}`);

  // `docker stop` sends SIGTERM; close cleanly so the environments are disposed.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      server.close().finally(() => process.exit(0));
    });
  }
}

if (process.argv[2] === RELAY_ARG) await (await import('./stream-relay.js')).relayMain();
else await serverMain();
