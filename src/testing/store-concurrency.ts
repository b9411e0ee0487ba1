import type { Session } from '../session/model.js';
import type { SessionStore } from '../session/store.js';
import { sampleSession } from './sample-session.js';

/** Rounds of concurrent saves; each round's versions differ in shape and in every loop. */
const ROUNDS = 8;
const WRITERS = 6;

/**
 * Saves several versions of one session concurrently, round after round, while loading it
 * again and again, and checks that every load, during the saves and after them, is exactly one
 * of the versions saved so far. The versions differ in every loop and in their number of loops,
 * and the saves start staggered (a few macrotask turns apart, varying by round), so a store
 * that writes a session in parts shows a mix of two versions. Returns the first problem, if any.
 */
export async function tearingRounds(store: SessionStore): Promise<string | undefined> {
  const id = 'contended';
  const saved: Session[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const versions = Array.from({ length: WRITERS }, (_, k) => version(id, `r${round}w${k}`, k));
    let writing = true;
    const problems: string[] = [];
    const reader = (async () => {
      while (writing) {
        const loaded = await store.load(id).catch(() => undefined);
        if (loaded && !isOneOf(loaded, [...saved, ...versions])) problems.push(`round ${round}: a load during concurrent saves returned a mix of versions`);
        await turn();
      }
    })();
    await Promise.all(
      versions.map(async (session, k) => {
        for (let wait = 0; wait < (k * (round + 1)) % 4; wait++) await turn();
        await store.save(session);
      }),
    );
    writing = false;
    await reader;
    const final = await store.load(id);
    if (!isOneOf(final, versions)) problems.push(`round ${round}: after ${WRITERS} concurrent saves the session is none of them whole`);
    if (problems.length > 0) return problems[0];
    saved.push(...versions);
  }
  return undefined;
}

/** Version `k`: the sample session with `k % 3` extra loops, every field tagged. */
function version(id: string, tag: string, k: number): Session {
  const session = sampleSession(id, 'agent-a', tag);
  const [first] = session.loops;
  for (let extra = 0; extra < k % 3; extra++) {
    session.loops.push({ ...structuredClone(first!), loopId: `${id}.extra.${extra + 1}`, metadata: { note: `${tag}-extra-${extra}` } });
  }
  return session;
}

function isOneOf(loaded: Session, candidates: readonly Session[]): boolean {
  const text = canonical(loaded);
  return candidates.some((c) => canonical(c) === text);
}

/** JSON with sorted keys: equal for deep-equal sessions whatever the key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** One macrotask turn: lets I/O callbacks and timers of other writers run in between. */
function turn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
