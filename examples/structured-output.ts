/**
 * Structured output: the run ends with a validated, typed object instead of text.
 * `npm run example examples/structured-output.ts` (scripted, no key needed).
 *
 * The scripted model looks the weather up with a tool, answers with JSON whose `celsius` is a
 * string, gets one corrective turn listing what was wrong, and answers again. The partial objects
 * are printed as the answer streams (what a UI would render), then the typed result.
 */
import { z } from 'zod';
import { tap } from 'rxjs';
import { BasicAgent, defineTool, partialOutput, runOutput, textOf, type AgentEvent } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const Weather = z.object({
  city: z.string(),
  celsius: z.number(),
  conditions: z.array(z.string()),
});

const lookup = defineTool({
  name: 'lookup_weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `${city}: 18°C, clear, light wind`,
});

// With a real model: `model: anthropic('claude-sonnet-4-5')` and no provider (OpenAI and Gemini get a
// response format, Anthropic and Bedrock a forced output tool).
const provider = scriptedProvider(
  [
    { toolCalls: [{ name: 'lookup_weather', arguments: { city: 'Paris' } }] },
    { text: '{"city":"Paris","celsius":"18°C","conditions":["clear"]}' },
    { text: '{"city":"Paris","celsius":18,"conditions":["clear","light wind"]}' },
  ],
  { chunkSize: 9 },
);
const agent = new BasicAgent({ model: scriptedModel(), provider, systemPrompt: 'You report the weather.' }).withTools(lookup);

const run$ = agent.prompt('Weather in Paris?', { output: Weather });
/** The text of the corrective message the loop adds after an invalid answer. */
const correction = (e: AgentEvent): string | undefined =>
  e.type === 'MessageEnd' && e.message.role === 'user' && textOf(e.message).startsWith('Your answer') ? textOf(e.message) : undefined;
run$
  .pipe(
    tap((e) => correction(e) && console.log(`\ncorrective turn › ${correction(e)}\n`)),
    partialOutput(Weather),
  )
  .subscribe((partial) => console.log('partial ›', JSON.stringify(partial)));

const weather = await runOutput(run$, Weather); // typed: { city: string; celsius: number; conditions: string[] }
console.log(`\noutput › ${weather.city}: ${weather.celsius}°C, ${weather.conditions.join(', ')}`);
console.log('after', provider.requests.length, 'model calls; the schema was sent as', JSON.stringify(provider.requests[0]!.responseFormat?.name));
