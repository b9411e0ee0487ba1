import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import { expect } from 'vitest';
import { AgentTracing, type AgentTracingOptions } from '../../../src/integrations/otel/index.js';

/** A tracing wired to in-memory exporters, and ways to read what it recorded. */
export function otelHarness(options: Omit<AgentTracingOptions, 'tracerProvider' | 'meterProvider'> = {}) {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const tracing = new AgentTracing({ ...options, tracerProvider, meterProvider });
  return {
    tracing,
    spans: (): ReadableSpan[] => spans.getFinishedSpans(),
    named(name: string): ReadableSpan[] {
      return spans.getFinishedSpans().filter((s) => s.name === name);
    },
    one(name: string): ReadableSpan {
      const found = spans.getFinishedSpans().filter((s) => s.name === name);
      expect(found, `spans named "${name}"`).toHaveLength(1);
      return found[0]!;
    },
    async histograms(): Promise<Map<string, HistogramMetricData>> {
      await reader.forceFlush();
      const out = new Map<string, HistogramMetricData>();
      for (const rm of metricExporter.getMetrics()) {
        for (const scope of rm.scopeMetrics) for (const m of scope.metrics) out.set(m.descriptor.name, m as HistogramMetricData);
      }
      return out;
    },
    async shutdown(): Promise<void> {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}

export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
export const idOf = (span: ReadableSpan): string => span.spanContext().spanId;

/** `[seconds, nanoseconds]` as milliseconds. */
export const ms = (t: readonly [number, number]): number => t[0] * 1000 + t[1] / 1e6;

/** The span tree as indented names, children in start order (then end order). */
export function tree(spans: readonly ReadableSpan[]): string[] {
  const ids = new Set(spans.map(idOf));
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number): void => {
    const children = spans
      .filter((s) => (parent === undefined ? !parentOf(s) || !ids.has(parentOf(s)!) : parentOf(s) === parent))
      .sort((a, b) => ms(a.startTime) - ms(b.startTime) || ms(a.endTime) - ms(b.endTime) || a.name.localeCompare(b.name));
    for (const child of children) {
      lines.push(`${'  '.repeat(depth)}${child.name}`);
      walk(idOf(child), depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}
