/**
 * Composition is the point: (1) put your own operator into the loop — here a redaction stage on
 * tool results — and (2) assemble a loop of your own from the exported stages: one model call
 * (retryBackoff, toMessageEvents), its tool calls (dispatchTools), no compaction; what the model
 * answered travels to the tool stage in the state, not in an outer variable.
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, map, type MonoTypeOperatorFunction, type Observable, toArray } from 'rxjs';
import { z } from 'zod';
import {
  agentLoop, buildRequest, callModel, defineTool, eventsOf, loopStages, loopState, runToolCalls, textOf, userMessage,
  type AgentEvent, type ToolResultMessage,
} from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const lookup = defineTool({
  name: 'lookup_customer',
  description: 'Finds a customer record',
  parameters: z.object({ id: z.string() }),
  execute: ({ id }) => `customer ${id}: Ada Lovelace, card 4111-1111-1111-1111, ada@example.com`,
});

/** A redaction operator: card numbers and e-mail addresses never reach the model or the UI. */
export function redact(): MonoTypeOperatorFunction<ToolResultMessage> {
  const scrub = (s: string): string => s.replace(/\b(?:\d{4}-){3}\d{4}\b/g, '[card]').replace(/[\w.]+@[\w.]+/g, '[email]');
  return map((r) => ({ ...r, content: r.content.map((c) => (c.type === 'text' ? { ...c, text: scrub(c.text) } : c)) }));
}

/** (1) The full loop with a redaction stage on tool results. */
export async function withRedaction(): Promise<string[]> {
  const provider = scriptedProvider([{ toolCalls: [{ name: 'lookup_customer', arguments: { id: '42' } }] }, { text: 'Found Ada.' }]);
  const events = await lastValueFrom(
    agentLoop([userMessage('Who is customer 42?')], { systemPrompt: '', messages: [], tools: [lookup] }, {
      model: scriptedModel(),
      provider,
      operators: { toolResults: redact() },
    }).pipe(toArray()),
  );
  // What the model saw on its second call:
  return provider.requests[1]!.messages.filter((m) => m.role === 'toolResult').map((m) => textOf(m));
}

/** (2) A one-turn loop of our own from the exported stages: no compaction, no hooks, no steering, no outer variables. */
export function miniLoop(prompt: string): Observable<AgentEvent> {
  const provider = scriptedProvider([{ text: 'Looking up.', toolCalls: [{ name: 'lookup_customer', arguments: { id: '7' } }] }]);
  const turn = loopStages(
    buildRequest({ model: scriptedModel(), systemPrompt: '', tools: [lookup], cacheConfig: { enabled: false, strategy: { kind: 'disabled' } } }),
    callModel({ provider, retry: { maxRetries: 2 } }), // the provider stream through retryBackoff and toMessageEvents
    runToolCalls({ tools: [lookup], strategy: 'sequential', toolResults: redact() }), // dispatchTools, with our redaction
  );
  return eventsOf(turn, loopState('mini.1', [userMessage(prompt)]));
}

export async function main(): Promise<void> {
  console.log('model saw:', await withRedaction());
  const events = await lastValueFrom(miniLoop('Find customer 7').pipe(toArray()));
  console.log('mini loop events:', events.map((e) => e.type).join(' → '));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
