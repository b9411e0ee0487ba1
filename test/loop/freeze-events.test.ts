import { describe, expect, it } from 'vitest';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { agentLoop, BasicAgent, transcript, userMessage, type AgentEvent, type Transcript } from 'phi-rx';
import { scriptedModel, scriptedProvider, type ScriptStep } from 'phi-rx/testing';
import { FREEZE_EVENTS } from '../../src/loop/freeze-events.js';
import { addTool, context } from '../agent/helpers.js';

/** Two turns with tool calls (one of them to an unknown tool), then the answer. */
const script: ScriptStep[] = [
  { text: 'Adding.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }, { name: 'nope', arguments: {} }] },
  { toolCalls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
  { text: '3 and 7.' },
];

/** The JSON of what was emitted, taken as it went out, next to the object itself. */
function kept<T>(): { seen: (value: T) => void; changed: () => number; count: () => number } {
  const copies: { value: T; json: string }[] = [];
  return {
    seen: (value) => copies.push({ value, json: JSON.stringify(value) }),
    changed: () => copies.filter((c) => JSON.stringify(c.value) !== c.json).length,
    count: () => copies.length,
  };
}

function deeplyFrozen(value: unknown, path = 'event'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (!Object.isFrozen(value)) return path;
  for (const [key, inner] of Object.entries(value)) {
    const open = deeplyFrozen(inner, `${path}.${key}`);
    if (open) return open;
  }
  return undefined;
}

describe('emitted means frozen', () => {
  it('an event kept as it is emitted never changes afterwards (tool results included)', async () => {
    const events = kept<AgentEvent>();
    await lastValueFrom(agentLoop([userMessage('add', 0)], context([addTool]), { model: scriptedModel(), provider: scriptedProvider(script), retry: false }).pipe(tap(events.seen), toArray()));
    expect(events.count()).toBeGreaterThan(20);
    expect(events.changed()).toBe(0);
  });

  it('transcript() snapshots kept during a run with tool results never change', async () => {
    const snapshots = kept<Transcript>();
    const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider(script), systemPrompt: 'sys', tools: [addTool], retry: false });
    const done = lastValueFrom(agent.events$.pipe(transcript(), tap(snapshots.seen), toArray()), { defaultValue: [] });
    await lastValueFrom(agent.prompt('add'));
    agent.reset();
    void done;
    expect(snapshots.count()).toBeGreaterThan(20);
    expect(snapshots.changed()).toBe(0);
  });

  it.runIf(FREEZE_EVENTS)('with PHI_RX_FREEZE=1 (this suite), every event of agentLoop and of BasicAgent is frozen all the way down', async () => {
    const fromLoop = await lastValueFrom(agentLoop([userMessage('add', 0)], context([addTool]), { model: scriptedModel(), provider: scriptedProvider(script), retry: false }).pipe(toArray()));
    const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider(script), systemPrompt: 'sys', tools: [addTool], retry: false });
    const fromAgent = await lastValueFrom(agent.prompt('add').pipe(toArray()));
    for (const e of [...fromLoop, ...fromAgent]) expect(deeplyFrozen(e), e.type).toBeUndefined();
    const end = fromAgent.at(-1)!;
    expect(() => {
      (end as { type: string }).type = 'changed';
    }).toThrow(TypeError);
  });

  it('the suite runs with PHI_RX_FREEZE=1 (test/setup/freeze-events.ts), unless a run turns it off', () => {
    expect(FREEZE_EVENTS).toBe(process.env.PHI_RX_FREEZE === '1' || process.env.PHI_RX_FREEZE === 'true');
  });
});
