import { fork, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingServer, startRedis, type RunningServer } from '../support/servers.js';

// A few thousand malformed requests per server, over raw sockets, at an EventStreamHub and a
// RedisEventRelay wired as the README wires them (plain node:http, in a process of their own,
// nothing catching): every request must get a 4xx/5xx, and the process must live and go on serving.

const PER_SERVER = Number(process.env['PHI_RX_FUZZ_REQUESTS'] ?? 3000);
const missingRedis = missingServer('redis');

/** A small deterministic PRNG (mulberry32), so a failure names a case that can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  readonly name: string;
  readonly bytes: Buffer;
}

/** One malformed request: a route of the server, then one to three defects, each enough for a 4xx. */
function makeCase(rand: () => number, n: number, relay: boolean): Case {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const route = rand() < 0.5 ? 'events' : 'commands';
  let method = route === 'events' ? 'GET' : 'POST';
  let id = 'live';
  let version = 'HTTP/1.1';
  const headers: string[] = ['Host: 127.0.0.1', 'Connection: close'];
  let body = route === 'commands' ? '{"type":"steer","text":"hello"}' : '';
  let contentType: string | undefined = route === 'commands' ? 'application/json' : undefined;
  let rawTail = '';
  let lengthHeader: string | undefined;
  let auth: string | undefined; // one credential header, the last defect's (repeated headers would be joined into one value)
  const defects: string[] = [];
  const all = ['id', 'unknownRun', 'method', 'lastEventId', 'contentType', 'json', 'shape', 'oversize', 'origin', 'deny', 'throw', 'reject', 'requestLine', 'headerSyntax', 'contentLength', 'chunked'] as const;
  // (the relay serves the events of a run that has no stream yet: its worker may not have started, so that is no defect there)
  const applicable = all.filter((d) => (route === 'events' ? !['contentType', 'json', 'shape', 'oversize', 'chunked'].includes(d) && !(relay && d === 'unknownRun') : d !== 'lastEventId'));
  const count = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < count; i++) {
    const defect = pick(applicable);
    defects.push(defect);
    switch (defect) {
      case 'id':
        id = pick(['%E0%A4%A', '%', '%zz', '%E0%A4', '%C0%AF%', '%ff%fe%', 'a%2', '%uD800', `%${'E0%A4%'.repeat(50)}`]);
        break;
      case 'unknownRun':
        id = pick(['nope', '..%2F..%2Fetc', `${'a'.repeat(2000 + Math.floor(rand() * 4000))}`, '%00', '%F0%9F%98%80', 'live%20', 'LIVE']);
        break;
      case 'method':
        method = pick(route === 'events' ? ['POST', 'PUT', 'DELETE', 'PATCH', 'TRACE'] : ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD']);
        break;
      case 'lastEventId':
        // (the relay's ids are stream ids, `ms-seq`; the hub's decimal digits)
        headers.push(`Last-Event-ID: ${pick(['0x10', '-1', '1e3', 'abc', '99999999999999999999999', '1.5', relay ? '1-x' : '1-0', '+1', '0b1', 'NaN', 'Infinity', '１'])}`);
        break;
      case 'contentType':
        contentType = pick([undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'text/json', 'application/json-patch+json']);
        break;
      case 'json':
        body = pick(['{', '{"type":', 'nul', '\u0000\u0001', '{"type":"steer","text":"x"', '[[[[[[[[', "{'type':'abort'}", String.fromCharCode(...Array.from({ length: 64 }, () => Math.floor(rand() * 256)))]);
        break;
      case 'shape':
        body = pick(['[]', 'null', '42', '"abort"', '{}', '{"type":"steer","text":""}', '{"type":"steer","text":7}', '{"type":"approve","toolCallId":"x"}', '{"type":"approve","toolCallId":"x","approved":true,"args":[1]}', '{"type":"cancelToolCall"}', '{"type":"rm -rf"}', '{"type":"__proto__"}', '{"type":"approve","toolCallId":"","approved":true}', `{"type":"steer","text":${'['.repeat(5000)}}`]);
        break;
      case 'oversize':
        body = `{"type":"steer","text":"${'x'.repeat(64 * 1024 + Math.floor(rand() * 64 * 1024))}"}`;
        break;
      case 'origin':
        headers.push(`Origin: ${pick(['https://evil.example', 'null', 'garbage', 'http://127.0.0.1.evil.example', 'file://', 'http://[::1'])}`);
        break;
      case 'deny':
        auth = 'Authorization: Bearer no';
        break;
      case 'throw':
        auth = 'X-Auth: throw';
        break;
      case 'reject':
        auth = 'X-Auth: reject';
        break;
      case 'requestLine':
        [method, version] = pick([['GE T', version], [method, 'HTTP/9.9'], [method, 'HTTX/1.1'], ['', version], [`${method}\u0000`, version], [method, 'HTTP/1.1 extra']]) as [string, string];
        break;
      case 'headerSyntax':
        headers.push(pick(['NoColonHere', 'Bad Header: x', 'X-Ctl: a\u0000b', ': empty-name', 'X-Long: ' + 'h'.repeat(20_000 + Math.floor(rand() * 60_000))]));
        break;
      case 'contentLength':
        lengthHeader = pick(['abc', '-5', '1, 2', '99999999999999999999999']);
        break;
      case 'chunked':
        headers.push('Transfer-Encoding: chunked');
        rawTail = pick(['zz\r\nabc\r\n0\r\n\r\n', '5\r\nabcdeX\r\n0\r\n\r\n', 'ffffffffffffffffff\r\n']);
        break;
    }
  }
  const target = `/runs/${id}/${route}${rand() < 0.2 ? `?lastEventId=${pick(['0x1', '-2', 'x'])}` : ''}`;
  if (contentType !== undefined) headers.push(`Content-Type: ${contentType}`);
  if (auth !== undefined) headers.push(auth);
  const chunked = rawTail !== '';
  if (!chunked) headers.push(`Content-Length: ${lengthHeader ?? Buffer.byteLength(body)}`);
  const head = `${method} ${target} ${version}\r\n${headers.join('\r\n')}\r\n\r\n`;
  return { name: `#${n} ${route} [${defects.join(', ')}]`, bytes: Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(chunked ? rawTail : body, 'utf8')]) };
}

/** Sends one raw request; resolves with the response's status code (0: none came before the socket closed or 5 s passed). */
function send(port: number, bytes: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let head = '';
    let done = false;
    const finish = (status: number) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(status);
    };
    const timer = setTimeout(() => finish(0), 5000);
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      if (match) finish(Number(match[1]));
    });
    socket.on('error', () => finish(0));
    socket.on('close', () => finish(0));
    socket.write(bytes); // no half-close: node:http would drop a request whose client shut its side (httpAllowHalfOpen)
  });
}

async function fuzz(port: number, seed: number, relay: boolean): Promise<{ sent: number; statuses: Map<number, number>; bad: string[] }> {
  const rand = random(seed);
  const cases = Array.from({ length: PER_SERVER }, (_, n) => makeCase(rand, n, relay));
  const statuses = new Map<number, number>();
  const bad: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      const status = await send(port, c.bytes);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status < 400) bad.push(`${c.name}: ${status || 'no answer'}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return { sent: cases.length, statuses, bad };
}

async function serves(port: number): Promise<boolean> {
  const status = await send(port, Buffer.from('GET /runs/live/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
  return status === 200;
}

describe('fuzzing the event servers over raw sockets', () => {
  let redis: RunningServer | undefined;
  let child: ChildProcess;
  let ports: { hub: number; relay?: number };
  const exits: Array<number | null> = [];

  beforeAll(async () => {
    if (missingRedis === undefined) redis = await startRedis();
    child = fork(fileURLToPath(new URL('./transport-servers.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...(redis ? { REDIS_URL: redis.url } : {}) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('exit', (code) => exits.push(code));
    ports = await new Promise((resolve) => child.once('message', (m) => resolve(m as typeof ports)));
  }, 60_000);
  afterAll(async () => {
    child?.kill();
    await redis?.stop();
  });

  it(`EventStreamHub: ${PER_SERVER} malformed requests, each a 4xx/5xx, and the process lives and serves`, async () => {
    const result = await fuzz(ports.hub, 31, false);
    console.log(`hub fuzz: ${result.sent} requests, statuses ${JSON.stringify(Object.fromEntries(result.statuses))}, crashes ${exits.length}`);
    expect(result.bad.slice(0, 10)).toEqual([]);
    expect(exits).toEqual([]);
    expect(await serves(ports.hub)).toBe(true);
  }, 300_000);

  it.skipIf(missingRedis !== undefined)(`RedisEventRelay: ${PER_SERVER} malformed requests, each a 4xx/5xx, and the process lives and serves`, async () => {
    const result = await fuzz(ports.relay!, 32, true);
    console.log(`relay fuzz: ${result.sent} requests, statuses ${JSON.stringify(Object.fromEntries(result.statuses))}, crashes ${exits.length}`);
    expect(result.bad.slice(0, 10)).toEqual([]);
    expect(exits).toEqual([]);
    expect(await serves(ports.relay!)).toBe(true);
  }, 300_000);
});
