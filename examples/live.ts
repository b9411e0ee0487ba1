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
import { agentLoop, defineTool, userMessage, type AgentEndEvent, type AgentEvent } from 'phi-rx';
import { liveModel } from './models.js';
import { renderEvent } from './render.js';

export { liveModel };

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

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const end = await main();
  process.exitCode = end === undefined || end.stopReason !== 'error' ? 0 : 1;
}
