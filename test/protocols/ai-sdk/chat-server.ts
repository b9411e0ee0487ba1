import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { BasicAgent, defineTool } from '../../../src/index.js';
import { scriptedProvider, type ScriptStep } from '../../../src/testing/index.js';
import { agentChatRun } from '../../../src/protocols/ai-sdk/index.js';
import { UIMessageStreamHub, type UIMessageStreamHubOptions } from '../../../src/protocols/ai-sdk/node/index.js';
import { model } from '../../agent/helpers.js';

export const deploy = defineTool({ name: 'deploy', description: 'deploys', parameters: z.object({ env: z.string() }), needsApproval: true, execute: ({ env }) => `deployed to ${env}` });
export const slow = defineTool({ name: 'slow', description: 'takes a while', parameters: z.object({}), execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('slow done'), 300)) });
export const add = defineTool({ name: 'add', description: 'adds', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => String(a + b) });

export interface ChatServer {
  readonly url: string;
  readonly hub: UIMessageStreamHub;
  readonly agents: BasicAgent[];
  close(): Promise<void>;
}

/** A hub on loopback whose runs play `script` on a fresh BasicAgent per request. */
export async function startChatServer(script: ScriptStep[], options: Partial<UIMessageStreamHubOptions> = {}): Promise<ChatServer> {
  const provider = scriptedProvider(script);
  const agents: BasicAgent[] = [];
  const hub = new UIMessageStreamHub({
    authorize: 'allow-all',
    run: ({ messages }) => {
      const agent = new BasicAgent({ model, provider, retry: false, tools: [deploy, add, slow] });
      agents.push(agent);
      return agentChatRun(agent, messages);
    },
    ...options,
  });
  const server: Server = createServer((req, res) => {
    if (!hub.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hub,
    agents,
    close: async () => {
      hub.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
