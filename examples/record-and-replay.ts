/**
 * Record a run with tools and steering to a session store, then replay it: the replay provider
 * feeds the recorded assistant messages back, so re-running the same prompt reproduces the run
 * event for event — without the model.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { lastValueFrom, type Observable, type SchedulerLike, toArray } from 'rxjs';
import { z } from 'zod';
import { agentLoop, defineTool, MessageQueue, userMessage, type AgentEvent, type Provider } from 'phi-rx';
import { FileSessionStore, recordSession, SessionRecorder, type Session } from 'phi-rx/session';
import { replayProvider, scriptedModel, scriptedProvider } from 'phi-rx/testing';

/** The same agent for recording and replaying: only the provider differs. */
export function travelRun(provider: Provider, scheduler?: SchedulerLike): Observable<AgentEvent> {
  const steering = new MessageQueue();
  const weather = defineTool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      if (city === 'Oslo') steering.push(userMessage('Use Celsius, please.', 0));
      return `${city}: ${city === 'Oslo' ? 4 : 17}°C`;
    },
  });
  let n = 0;
  return agentLoop(
    [userMessage('Compare Oslo and Lisbon.', 0)],
    { systemPrompt: 'You are a weather assistant.', messages: [], tools: [weather], agentId: 'agent-1', sessionId: 'session-1', loopId: 'session-1.travel.1' },
    { model: scriptedModel(), provider, steering, ids: () => `id-${++n}`, ...(scheduler ? { scheduler } : {}) },
  );
}

/** The scripted model the run is first recorded against. */
export function originalProvider(chunkDelay = 0): Provider {
  return scriptedProvider([
    { text: 'Checking both.', toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }, { name: 'weather', arguments: { city: 'Lisbon' } }], chunkDelay },
    { text: 'Oslo is 4°C and Lisbon 17°C.', chunkDelay },
  ]);
}

/** Runs with the recorder in the pipeline and saves the session. */
export async function record(store: FileSessionStore, provider: Provider = originalProvider()): Promise<{ session: Session; events: AgentEvent[] }> {
  const recorder = new SessionRecorder();
  const events = await lastValueFrom(travelRun(provider).pipe(recordSession(recorder), toArray()));
  recorder.flush();
  const [session] = recorder.drainCompleted();
  await store.save(session!);
  return { session: session!, events };
}

export async function main(): Promise<{ recorded: number; replayed: number; same: boolean }> {
  const dir = await mkdtemp(join(tmpdir(), 'phi-rx-replay-'));
  try {
    const store = new FileSessionStore(dir);
    const { events } = await record(store);
    const loaded = await store.load('session-1');
    const provider = replayProvider(loaded);
    const replayed = await lastValueFrom(travelRun(provider).pipe(toArray()));
    provider.assertComplete();
    const shape = (all: AgentEvent[]) => all.map((e) => (e.type === 'MessageUpdate' ? `${e.type}:${e.delta.type}:${'delta' in e.delta ? e.delta.delta : ''}` : e.type));
    const same = JSON.stringify(shape(events)) === JSON.stringify(shape(replayed));
    console.log(`recorded ${events.length} events; replayed ${replayed.length}; identical sequence: ${same}`);
    return { recorded: events.length, replayed: replayed.length, same };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
