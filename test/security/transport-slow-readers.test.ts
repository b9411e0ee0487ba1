import { fork, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// Clients that connect to a big run's event stream and never read: the server's memory must stay
// bounded by the sockets' buffers, not grow with the run times the clients.

const MiB = 1024 * 1024;
const CLIENTS = 50;
const RUN_MIB = 10;

let child: ChildProcess | undefined;
const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  child?.kill();
  child = undefined;
});

interface Memory {
  heapUsed: number;
  external: number;
  rss: number;
}

async function startServers(): Promise<{ port: number; memory(): Promise<Memory> }> {
  const proc = fork(fileURLToPath(new URL('./transport-servers.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: { ...process.env, RUN_MIB: String(RUN_MIB), REDIS_URL: '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child = proc;
  const ports = await new Promise<{ hub: number }>((resolve) => proc.once('message', (m) => resolve(m as { hub: number })));
  const memory = () => new Promise<Memory>((resolve) => {
    proc.once('message', (m) => resolve((m as { memory: Memory }).memory));
    proc.send({ memory: true });
  });
  return { port: ports.hub, memory };
}

/** Opens `n` event streams of the run "big" that never read a byte. */
function neverReading(port: number, n: number): void {
  for (let i = 0; i < n; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.pause(); // nothing is ever read: the kernel's buffers fill, then the server's
    socket.on('error', () => undefined);
    socket.write('GET /runs/big/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    sockets.push(socket);
  }
}

/**
 * The server's highest resident memory over `ms`, sampled every 100 ms (after a GC each time): a
 * socket's unsent strings are copied to native memory (libuv write requests) that neither heap nor
 * `external` counts, so RSS is what shows them.
 */
async function peakDuring(memory: () => Promise<Memory>, ms: number): Promise<number> {
  let peak = 0;
  for (const until = Date.now() + ms; Date.now() < until; ) {
    const m = await memory();
    peak = Math.max(peak, m.rss);
    await new Promise((r) => setTimeout(r, 100));
  }
  return peak;
}

describe(`${CLIENTS} never-reading clients on a ${RUN_MIB} MiB run`, () => {
  it('server memory stays bounded by the sockets\' buffers, not by the run; a reading client still gets the whole run', async () => {
    const server = await startServers();
    const before = await server.memory();
    neverReading(server.port, CLIENTS);
    const peak = await peakDuring(server.memory, 4000);
    const grown = peak - before.rss;
    console.log(
      `slow readers: ${CLIENTS} clients never reading a ${RUN_MIB} MiB run: server RSS ${(before.rss / MiB).toFixed(0)} MiB before, peak ${(peak / MiB).toFixed(1)} MiB (+${(grown / MiB).toFixed(1)} MiB; holding the run for each would be ~${CLIENTS * RUN_MIB} MiB)`,
    );
    // each client holds its socket's buffer and one frame in the server: never the run
    expect(grown).toBeLessThan(32 * MiB);
    expect(sockets.filter((s) => !s.destroyed)).toHaveLength(CLIENTS);
    // and the server goes on serving: a client that reads gets every byte of the run
    const text = await (await fetch(`http://127.0.0.1:${server.port}/runs/big/events`)).text();
    expect(text.length).toBeGreaterThan(RUN_MIB * MiB);
    expect(text.endsWith('event: phi-rx:end\ndata: {}\n\n')).toBe(true);
  }, 60_000);
});
