import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamHub, type EventStreamHubOptions } from '../../../src/protocols/transport/node/index.js';

export interface HubServer {
  url: string;
  hub: EventStreamHub;
  /** Every request's method, url and Last-Event-ID, in order. */
  requests: { method: string; url: string; lastEventId: string | undefined }[];
  /** Requests whose connection the client closed. */
  closed: number;
  /** Cuts the next event-stream response after this many run frames (a dropped connection). */
  dropNextAfterFrames(n: number): void;
  close(): Promise<void>;
}

/** A real node:http server on loopback that serves an EventStreamHub (`authorize: 'allow-all'` unless given). */
export async function startHubServer(options: Partial<EventStreamHubOptions> = {}): Promise<HubServer> {
  const hub = new EventStreamHub({ authorize: 'allow-all', ...options });
  let dropAfter: number | undefined;
  const state: HubServer = {
    url: '',
    hub,
    requests: [],
    closed: 0,
    dropNextAfterFrames: (n) => {
      dropAfter = n;
    },
    close: async () => {
      hub.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const lastEventId = req.headers['last-event-id'];
    state.requests.push({ method: req.method ?? '', url: req.url ?? '', lastEventId: Array.isArray(lastEventId) ? lastEventId[0] : lastEventId });
    req.once('close', () => state.closed++);
    if (dropAfter !== undefined && req.url?.endsWith('/events')) {
      const limit = dropAfter;
      dropAfter = undefined;
      let frames = 0;
      const write = res.write.bind(res) as (chunk: string) => boolean;
      res.write = ((chunk: string) => {
        if (chunk.startsWith('id: ') && ++frames > limit) {
          res.socket?.destroy(); // the network drops the connection mid-reply
          return false;
        }
        return write(chunk);
      }) as typeof res.write;
    }
    if (!hub.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
