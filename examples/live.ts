/**
 * phi-rx against a real API: the same two-tool agent as the quickstart, on Anthropic, OpenAI or
 * Gemini, whichever key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, tried in that
 * order). With no key it says so and exits 0, so it is safe to run anywhere:
 *
 *   ANTHROPIC_API_KEY=... npm run example examples/live.ts
 *   PHI_RX_LIVE_MODEL=claude-sonnet-4-5 ANTHROPIC_API_KEY=... npm run example examples/live.ts
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap } from 'rxjs';
import { z } from 'zod';
import { agentLoop, anthropic, defineTool, google, openai, userMessage, type AgentEndEvent, type AgentEvent, type ModelConfig } from 'phi-rx';

export async function main(
  options: { env?: Record<string, string | undefined>; write?: (s: string) => void } = {},
): Promise<AgentEndEvent | undefined> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const model = liveModel(options.env);
  if (!model) {
    write('examples/live.ts: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY to run against a real API. Nothing to do.\n');
    return undefined;
  }
  write(`Running against ${model.provider} / ${model.id}\n`);

  const temperatures: Record<string, number> = { paris: 18, rome: 24 };
  const weather = defineTool({
    name: 'weather',
    description: 'Current temperature in °C for a city',
    parameters: z.object({ city: z.string().describe('City name, e.g. "Paris"') }),
    execute: ({ city }) => {
      const t = temperatures[city.toLowerCase()];
      return t === undefined ? `No data for ${city}.` : `${city}: ${t}°C, clear sky`;
    },
  });
  const difference = defineTool({
    name: 'difference',
    description: 'Subtracts b from a',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a - b),
  });

  const run$ = agentLoop(
    [userMessage('What is the weather in Paris and in Rome, and how many degrees warmer is the warmer one? Use the tools.')],
    { systemPrompt: 'You are a concise travel assistant. Use tools for facts and arithmetic.', messages: [], tools: [weather, difference] },
    { model, limits: { maxTurns: 6 } },
  );
  const events: AgentEvent[] = [];
  await lastValueFrom(run$.pipe(tap((e) => (events.push(e), renderEvent(e, write)))));
  const end = events.at(-1) as AgentEndEvent;
  write(`\nstop: ${end.stopReason}; tokens: ${end.usage.totalTokens}\n`);
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
  process.exitCode = end === undefined || end.stopReason !== 'error' ? 0 : 1;
}
