/**
 * OpenTelemetry tracing of an agent that delegates to a sub-agent: one `AgentTracing` shared by
 * both, so the sub-agent's run nests under the tool call that started it. Spans go to an
 * in-memory exporter here; in an app, register your SDK's exporter (OTLP ...) instead.
 */
import { pathToFileURL } from 'node:url';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { BasicAgent, defineTool, subAgentTool } from 'phi-rx';
import { AgentTracing } from 'phi-rx/otel';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const population = defineTool({
  name: 'population',
  description: 'Population of a city, in millions',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ Tokyo: '37.4', Delhi: '32.9' })[city] ?? 'unknown',
});

export async function main(write: (s: string) => void = (s) => process.stdout.write(s)): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = new AgentTracing({ agentName: 'coordinator', tracerProvider });

  const researcher = subAgentTool({
    name: 'researcher',
    model: scriptedModel('researcher-model'),
    provider: scriptedProvider([{ toolCalls: [{ name: 'population', arguments: { city: 'Tokyo' } }] }, { text: 'Tokyo: 37.4 million.' }]),
    tools: [population],
    config: { operators: { events: tracing.trace() } }, // the same tracing: the child's spans nest
  });
  const agent = new BasicAgent({
    model: scriptedModel('coordinator-model'),
    provider: scriptedProvider([{ toolCalls: [{ name: 'researcher', arguments: { task: 'How many people live in Tokyo?' } }] }, { text: 'About 37 million.' }]),
    tools: [researcher],
    tracing,
  });
  await agent.run('How big is Tokyo?');

  // Children in the order they ended: the order they ran in, one after another.
  const spans = exporter.getFinishedSpans();
  const print = (parent: string | undefined, depth: number): void => {
    for (const span of spans.filter((s) => s.parentSpanContext?.spanId === parent)) {
      write(`${'  '.repeat(depth)}${span.name}\n`);
      print(span.spanContext().spanId, depth + 1);
    }
  };
  print(undefined, 0);
  await tracerProvider.shutdown();
  return spans;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
