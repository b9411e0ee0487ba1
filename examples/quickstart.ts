/**
 * phi-rx quickstart: a real agent run — two tool calls, a steering message that arrives while a
 * tool runs, and a follow-up — its events rendered live. Run it with `npm start`.
 *
 * With ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY set it runs against that real model
 * (chosen as in examples/live.ts); otherwise, or with PHI_RX_SCRIPTED=1, on the scripted
 * provider, which needs no key. A run that fails (a bad or missing key, no network) prints
 * `error: …` on stderr and exits with status 1.
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap } from 'rxjs';
import { z } from 'zod';
import { agentLoop, defineTool, MessageQueue, userMessage, type AgentEndEvent, type AgentEvent } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';
import { liveModel } from './models.js';
import { renderEvent } from './render.js';

export interface QuickstartOptions {
  chunkDelayMs?: number;
  write?: (s: string) => void;
  /** Where a failed run's error goes; default stderr. */
  writeError?: (s: string) => void;
  /** Force the scripted provider whatever keys are set. */
  scripted?: boolean;
  /** Where API keys are looked up; default `process.env`. */
  env?: Record<string, string | undefined>;
}

export async function main(options: QuickstartOptions = {}): Promise<AgentEndEvent> {
  const chunkDelay = options.chunkDelayMs ?? 25;
  const env = options.env ?? process.env;
  const live = options.scripted || env['PHI_RX_SCRIPTED'] ? undefined : liveModel(env);
  const steering = new MessageQueue();
  const followUp = new MessageQueue();

  const weather = defineTool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      // A user types while the first tool runs: it joins the conversation at the next turn.
      if (/^paris/i.test(city)) steering.push(userMessage('Also compare with Rome, please.'));
      return `${city}: ${/^paris/i.test(city) ? 18 : 24}°C, clear`;
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

  const write = options.write ?? ((s: string) => process.stdout.write(s));
  if (live) write(`Using ${live.provider} / ${live.id} (PHI_RX_SCRIPTED=1 runs the scripted demo instead)\n`);

  followUp.push(userMessage('One more thing: what should I pack?'));
  const run$ = agentLoop(
    [userMessage('What is the weather in Paris?')],
    { systemPrompt: 'You are a travel assistant.', messages: [], tools: [weather] },
    live ? { model: live, steering, followUp, limits: { maxTurns: 8 } } : { model: scriptedModel(), provider, steering, followUp },
  );
  const events: AgentEvent[] = [];
  await lastValueFrom(run$.pipe(tap((e) => (events.push(e), renderEvent(e, write)))));
  const end = events.at(-1) as AgentEndEvent;
  // A real API can refuse (bad key, no network): say why rather than just "error".
  const last = end.messages.at(-1);
  const writeError = options.writeError ?? ((s: string) => process.stderr.write(s));
  if (end.stopReason === 'error') writeError(`error: ${(last?.role === 'assistant' && last.errorMessage) || 'the run failed'}\n`);
  return end;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const end = await main();
  process.exitCode = end.stopReason === 'error' ? 1 : 0;
}
