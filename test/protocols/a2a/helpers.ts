import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { a2aMessageOf } from '../../../src/protocols/a2a/index.js';

export type Binding = 'JSONRPC' | 'HTTP+JSON';

/** The SDK's own client for the server at `url`, preferring `binding`. */
export function clientFor(url: string, binding: Binding, headers: Record<string, string> = {}): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) merged.set(k, v);
    return fetch(input, { ...init, headers: merged });
  };
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [binding],
    cardResolver: undefined,
  }).createFromUrl(url);
}

export function send(text: string | Message['parts'], ids: { contextId?: string; taskId?: string } = {}) {
  return { tenant: '', message: a2aMessageOf(text, ids), configuration: undefined, metadata: {} };
}

export async function collect(stream: AsyncIterable<StreamResponse>, onEach?: (r: StreamResponse) => void | Promise<void>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const r of stream) {
    out.push(r);
    await onEach?.(r);
  }
  return out;
}

export const stateOf = (r: StreamResponse): number | undefined =>
  r.payload?.$case === 'statusUpdate' ? r.payload.value.status?.state : r.payload?.$case === 'task' ? r.payload.value.status?.state : undefined;

export const taskOf = (rs: StreamResponse[]): Task => {
  const first = rs[0]?.payload;
  if (first?.$case !== 'task') throw new Error(`the stream did not start with a task: ${JSON.stringify(first)}`);
  return first.value;
};

/** The text of every status message's text parts, in order. */
export const statusText = (rs: StreamResponse[]): string =>
  rs.map((r) => (r.payload?.$case === 'statusUpdate' && r.payload.value.metadata?.['phi-rx']?.type === 'MessageUpdate' ? textOf(r.payload.value.status?.message) : '')).join('');

export function textOf(m: Message | undefined): string {
  return (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}
