/**
 * phi-rx quickstart: a real agent run — two tool calls, a steering message that arrives while a
 * tool runs, and a follow-up — on the scripted provider (no API key needed), its events rendered
 * live. Run it with `npm start`.
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap } from 'rxjs';
import { z } from 'zod';
import { agentLoop, defineTool, MessageQueue, userMessage, type AgentEndEvent, type AgentEvent } from '../src/index.js';
import { scriptedModel, scriptedProvider } from '../src/testing/index.js';
import { renderEvent } from './render.js';

export async function main(options: { chunkDelayMs?: number; write?: (s: string) => void } = {}): Promise<AgentEndEvent> {
  const chunkDelay = options.chunkDelayMs ?? 25;
  const steering = new MessageQueue();
  const followUp = new MessageQueue();

  const weather = defineTool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      // A user types while the first tool runs: it joins the conversation at the next turn.
      if (city === 'Paris') steering.push(userMessage('Also compare with Rome, please.'));
      return `${city}: ${city === 'Paris' ? 18 : 24}°C, clear`;
    },
  });

  const provider = scriptedProvider(
    [
      { text: 'Let me check Paris.', toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }], chunkDelay },
      { text: 'And Rome, as you asked.', toolCalls: [{ name: 'weather', arguments: { city: 'Rome' } }], chunkDelay },
      { text: 'Paris is 18°C and Rome 24°C: Rome is warmer by 6 degrees.', chunkDelay },
      { text: 'Pack a light jacket for Paris evenings.', chunkDelay },
    ],
    { chunkSize: 3 },
  );

  followUp.push(userMessage('One more thing: what should I pack?'));
  const run$ = agentLoop(
    [userMessage('What is the weather in Paris?')],
    { systemPrompt: 'You are a travel assistant.', messages: [], tools: [weather] },
    { model: scriptedModel(), provider, steering, followUp },
  );
  const events: AgentEvent[] = [];
  await lastValueFrom(run$.pipe(tap((e) => (events.push(e), renderEvent(e, options.write)))));
  return events.at(-1) as AgentEndEvent;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
