import type { Session } from './model.js';
import { decodeSession, encodeSession, reportSkipped, SessionCorruptError, SessionNotFoundError, type SessionListOptions, type SessionStore } from './store.js';

/**
 * A SessionStore in memory, for tests and short-lived processes. It keeps each session as JSON
 * text, so a loaded session is a detached copy validated exactly as a file store would.
 */
export class InMemorySessionStore implements SessionStore {
  private readonly entries = new Map<string, { json: string; agentId: string; seq: number }>();
  private seq = 0;

  async save(session: Session): Promise<void> {
    this.entries.set(session.sessionId, { json: encodeSession(session, 'memory'), agentId: session.agentId, seq: ++this.seq });
  }

  async load(sessionId: string): Promise<Session> {
    const entry = this.entries.get(sessionId);
    if (!entry) throw new SessionNotFoundError(sessionId, 'memory');
    return decodeSession(entry.json, sessionId, `memory:${sessionId}`);
  }

  async listIds(): Promise<string[]> {
    return [...this.entries].sort(([, a], [, b]) => b.seq - a.seq).map(([id]) => id);
  }

  async delete(sessionId: string): Promise<void> {
    if (!this.entries.delete(sessionId)) throw new SessionNotFoundError(sessionId, 'memory');
  }

  async listForAgent(agentId: string, options?: SessionListOptions): Promise<Session[]> {
    const ids = (await this.listIds()).filter((id) => this.entries.get(id)!.agentId === agentId);
    const out: Session[] = [];
    for (const id of ids) {
      try {
        out.push(await this.load(id));
      } catch (e) {
        if (!(e instanceof SessionCorruptError)) throw e;
        reportSkipped(e, options);
      }
    }
    return out;
  }
}
