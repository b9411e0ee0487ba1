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
import { agentLoop, anthropic, defineTool, google, MessageQueue, openai, userMessage, type AgentEndEvent, type AgentEvent, type ModelConfig } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

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

// ---- helpers, here so that this file runs on its own when copied into a project

/**
 * The real model for the first API key in `env` (ANTHROPIC_API_KEY, then OPENAI_API_KEY, then
 * GEMINI_API_KEY), or undefined when there is none. PHI_RX_PROVIDER (anthropic | openai | google)
 * picks the provider whether or not its key is set, PHI_RX_LIVE_MODEL the model id, PHI_RX_BASE_URL
 * another endpoint. (examples/models.ts shows the same choice with the catalogue's defaults.)
 */
export function liveModel(env: Record<string, string | undefined> = process.env): ModelConfig | undefined {
  const override = env['PHI_RX_LIVE_MODEL'];
  const options = { maxTokens: 1024, ...(env['PHI_RX_BASE_URL'] ? { baseUrl: env['PHI_RX_BASE_URL'] } : {}) };
  const chosen = env['PHI_RX_PROVIDER'];
  if (chosen !== undefined && !['anthropic', 'openai', 'google'].includes(chosen)) {
    throw new Error(`PHI_RX_PROVIDER must be anthropic, openai or google, not "${chosen}"`);
  }
  if (chosen === 'anthropic' || (!chosen && env['ANTHROPIC_API_KEY'])) return anthropic(override ?? 'claude-haiku-4-5', options);
  if (chosen === 'openai' || (!chosen && env['OPENAI_API_KEY'])) return openai(override ?? 'gpt-4o-mini', options);
  if (chosen === 'google' || (!chosen && env['GEMINI_API_KEY'])) return google(override ?? 'gemini-2.5-flash', options);
  return undefined;
}

const textOf = (content: ReadonlyArray<{ type: string; text?: string }>): string => content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('');

/** Renders agent events in a terminal as they arrive: streamed text, tool calls, results (examples/render.ts). */
function renderEvent(e: AgentEvent, write: (s: string) => void): void {
  if (e.type === 'TurnStart') write(`\n── turn ${e.turnIndex} (${e.triggeredBy}) ──\n`);
  else if (e.type === 'MessageStart' && e.message.role === 'user') write(`you › ${textOf(e.message.content)}\n`);
  else if (e.type === 'MessageStart' && e.message.role === 'assistant') write('agent › ');
  else if (e.type === 'MessageUpdate' && e.delta.type === 'text') write(e.delta.delta);
  else if (e.type === 'MessageEnd' && e.message.role === 'assistant') write('\n');
  else if (e.type === 'ToolExecutionStart') write(`  ⚙ ${e.toolName}(${JSON.stringify(e.args)})\n`);
  else if (e.type === 'ToolExecutionEnd') write(`  ${e.isError ? '✗' : '✓'} ${e.toolName} → ${textOf(e.result.content)}\n`);
  else if (e.type === 'RetryScheduled') write(`  ↻ retry ${e.attempt} in ${e.delayMs}ms (${e.errorKind})\n`);
  else if (e.type === 'AgentEnd') write(`\n[done: ${e.stopReason}, ${e.messages.length} new messages, ${e.usage.totalTokens} tokens]\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const end = await main();
  process.exitCode = end.stopReason === 'error' ? 1 : 0;
}
