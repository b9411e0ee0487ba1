import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BasicAgent } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { a2aMessageOf, a2aServer, type A2aServer } from '../../../src/protocols/a2a/index.js';
import { clientFor } from './helpers.js';

let server: A2aServer | undefined;
let webhook: Server | undefined;
afterEach(async () => {
  await server?.close();
  webhook?.closeAllConnections();
  await new Promise<void>((resolve) => (webhook ? webhook.close(() => resolve()) : resolve()));
  server = undefined;
  webhook = undefined;
});

/** A webhook receiver on loopback: what it was sent, with the token header. */
async function receiver(): Promise<{ url: string; posts: Array<{ token: string | undefined; body: string }> }> {
  const posts: Array<{ token: string | undefined; body: string }> = [];
  webhook = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      posts.push({ token: req.headers['x-a2a-notification-token'] as string | undefined, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => webhook!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hook`, posts };
}

const configWith = (url: string) => ({
  acceptedOutputModes: [], returnImmediately: false,
  taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url, token: 'hook-token', authentication: undefined },
});

describe('a2aServer push notifications', () => {
  it('off by default; configured, the allowed webhook gets the task\'s updates up to completed; another URL is refused', async () => {
    const hook = await receiver();
    server = await a2aServer({ model: scriptedModel(), provider: scriptedProvider([{ text: 'Done in the background.' }, { text: 'never' }]), retry: false }, {
      card: { name: 'Worker', description: 'Works' },
      authorize: 'allow-all',
      pushNotifications: { allowUrl: (url) => url.hostname === '127.0.0.1' && url.pathname === '/hook' },
    });
    const client = await clientFor(await server.listen(), 'JSONRPC');
    expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(true);
    const task = await client.sendMessage({ tenant: '', message: a2aMessageOf('work'), configuration: configWith(hook.url), metadata: {} });
    expect('id' in task && task.status?.state).toBe(3);
    await vi.waitFor(() => expect(hook.posts.some((p) => /TASK_STATE_COMPLETED|"state":3/.test(p.body))).toBe(true), { timeout: 10_000 });
    expect(hook.posts.every((p) => p.token === 'hook-token')).toBe(true);
    expect(hook.posts.map((p) => p.body).join('')).toContain('Done in the background.');

    const refused = client.sendMessage({ tenant: '', message: a2aMessageOf('work'), configuration: configWith('http://10.0.0.1/steal'), metadata: {} });
    await expect(refused).rejects.toThrow(/push notification URL http:\/\/10\.0\.0\.1\/steal is not allowed on this server/);
  });

  it('pushNotifications without allowUrl is refused at start', async () => {
    await expect(a2aServer({ model: scriptedModel() }, { card: { name: 'x', description: 'y' }, authorize: 'allow-all', pushNotifications: {} as never })).rejects.toThrow(/pushNotifications.allowUrl is required/);
  });
});
