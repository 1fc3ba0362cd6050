import { describe, expect, it } from 'vitest';
import { AgentError, type AgentTurn } from '../adapters/adapter.js';
import { StartedAgentSession } from '../adapters/agent-session.js';

/** The base every agent session extends (adapters/agent-session.ts): one teardown, however often it is asked for. */
class CountingSession extends StartedAgentSession {
  stops = 0;
  release!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));
  constructor() {
    super('probe');
  }
  async send(message: string): Promise<AgentTurn> {
    this.assertOpen();
    return { response: message };
  }
  protected async stop(): Promise<void> {
    this.stops++;
    await this.gate;
  }
}

describe('StartedAgentSession', () => {
  it('closes once: concurrent and later close() calls, and await using, all wait for the one teardown', async () => {
    const session = new CountingSession();
    expect(await session.send('hi')).toEqual({ response: 'hi' });
    const first = session.close();
    const second = session.close();
    expect(session.stops).toBe(1);
    let settled = false;
    void second.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false); // still tearing down
    session.release();
    await Promise.all([first, second, session[Symbol.asyncDispose]()]);
    expect(session.stops).toBe(1);
  });

  it('a turn after close fails with an AgentError naming the agent', async () => {
    const session = new CountingSession();
    session.release();
    await session.close();
    await expect(session.send('again')).rejects.toThrow(AgentError);
    await expect(session.send('again')).rejects.toThrow('probe session is closed');
  });

  it('`await using` closes it at the end of the block', async () => {
    let kept: CountingSession | undefined;
    {
      await using session = new CountingSession();
      session.release();
      kept = session;
    }
    expect(kept.stops).toBe(1);
  });
});
