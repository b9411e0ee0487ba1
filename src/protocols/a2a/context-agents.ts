import { createHash } from 'node:crypto';
import { BasicAgent, type BasicAgentOptions } from '../../agent/basic-agent.js';
import { agentSession, SessionRecorder } from '../../agent/agent-session.js';
import { InMemorySessionStore } from '../../session/memory-store.js';
import { SessionNotFoundError, type SessionStore } from '../../session/store.js';

/**
 * The agent an A2A server runs: its options (each context gets `new BasicAgent(options)`), or a
 * function making a fresh agent (with its tools) for a context. Not one BasicAgent instance: an
 * agent holds one conversation, and every A2A context is a conversation of its own.
 */
export type A2aAgentSource = BasicAgentOptions | ((contextId: string) => BasicAgent);

/** The session id a context's conversation is stored under: `a2a-` and a hash of the context id (any string a client sends is a safe id). */
export function sessionIdOfContext(contextId: string): string {
  return `a2a-${createHash('sha256').update(contextId).digest('hex').slice(0, 40)}`;
}

/**
 * One BasicAgent per A2A context id, its conversation kept in a session store: an agent is made on
 * the context's first message, restored from the store when the store has the context (a server
 * restarted, or another replica), and saved by the executor after every run. At most `maxAgents`
 * stay in memory; past that the least recently used idle ones are dropped (the store has them).
 */
export class ContextAgents {
  private readonly agents = new Map<string, Promise<BasicAgent>>();

  constructor(
    private readonly source: A2aAgentSource,
    readonly store: SessionStore,
    private readonly maxAgents = 256,
  ) {
    if (source instanceof BasicAgent) {
      throw new TypeError(
        'a2aServer: pass the agent\'s options or a function making an agent per context (contextId => new BasicAgent(...)), not one BasicAgent: every A2A context is a conversation of its own',
      );
    }
    if (typeof source !== 'function' && (typeof source !== 'object' || source === null || !('model' in source))) {
      throw new TypeError('a2aServer: the first argument must be BasicAgentOptions (with a model) or a function contextId => BasicAgent');
    }
  }

  /** A fresh agent, not bound to any context (for the agent card: its tools and system prompt). */
  probe(): BasicAgent {
    return this.make('');
  }

  /** The context's agent: in memory, else restored from the store, else new. */
  get(contextId: string): Promise<BasicAgent> {
    let agent = this.agents.get(contextId);
    if (agent) {
      this.agents.delete(contextId);
      this.agents.set(contextId, agent);
      return agent;
    }
    agent = this.load(contextId);
    this.agents.set(contextId, agent);
    agent.then(() => this.evict(), () => this.agents.delete(contextId));
    return agent;
  }

  /** Saves the agent's conversation to the store. */
  async save(agent: BasicAgent): Promise<void> {
    await agent.save(this.store);
  }

  private async load(contextId: string): Promise<BasicAgent> {
    const agent = this.make(contextId);
    const sessionId = sessionIdOfContext(contextId);
    try {
      await agent.restore(this.store, sessionId);
    } catch (e) {
      if (!(e instanceof SessionNotFoundError)) throw e;
      // A new context: the agent takes the context's session id (an empty session, restored).
      const blank = new InMemorySessionStore();
      await blank.save(agentSession(new SessionRecorder(), sessionId, agent.agentId, Date.now()));
      await agent.restore(blank, sessionId);
    }
    return agent;
  }

  private make(contextId: string): BasicAgent {
    const agent = typeof this.source === 'function' ? this.source(contextId) : new BasicAgent(this.source);
    if (!(agent instanceof BasicAgent)) throw new TypeError(`a2aServer: the agent function returned ${agent === null ? 'null' : typeof agent}, not a BasicAgent`);
    return agent;
  }

  /** Drops the least recently used agents that are idle (no run, nothing waiting) while over the limit. */
  private evict(): void {
    if (this.agents.size <= this.maxAgents) return;
    for (const [contextId, pending] of this.agents) {
      if (this.agents.size <= this.maxAgents) return;
      void pending.then((agent) => {
        if (!agent.isStreaming && agent.pendingApprovals().length === 0 && this.agents.get(contextId) === pending && this.agents.size > this.maxAgents) {
          this.agents.delete(contextId);
        }
      });
    }
  }
}
