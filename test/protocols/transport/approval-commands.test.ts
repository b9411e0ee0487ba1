import { afterEach, describe, expect, it } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, shareReplay, toArray } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, textOf, type AgentEvent, type ToolResultMessage } from '../../../src/index.js';
import { scriptedProvider } from '../../../src/testing/index.js';
import { fromEventStream, runCommands } from '../../../src/protocols/transport/index.js';
import { model } from '../../agent/helpers.js';
import { startHubServer, type HubServer } from './hub-server.js';

let server: HubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('approving and cancelling over the command channel', () => {
  it('a client answers the ToolApprovalRequested it saw with an approve command; the run goes on', async () => {
    server = await startHubServer();
    const gated = defineTool({ name: 'deploy', description: 'deploys', parameters: z.object({ env: z.string() }), needsApproval: true, allowEdits: true, execute: ({ env }) => `deployed to ${env}` });
    const slow = defineTool({ name: 'wait', description: 'waits', parameters: z.object({}), execute: (_a, ctx) => new Promise<string>((_r, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped')))) });
    const agent = new BasicAgent({
      model, retry: false, tools: [gated, slow],
      provider: scriptedProvider([{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' }, id: 'd1' }, { name: 'wait', arguments: {}, id: 'w1' }] }, { text: 'ok' }]),
    });
    const id = server.hub.startAgent(agent, 'ship it');
    const events$ = fromEventStream(`${server.url}/runs/${id}/events`).pipe(shareReplay());
    const all = lastValueFrom(events$.pipe(toArray()));
    const asked = await firstValueFrom(events$.pipe(filter((e): e is Extract<AgentEvent, { type: 'ToolApprovalRequested' }> => e.type === 'ToolApprovalRequested')));
    const commands = runCommands(`${server.url}/runs/${id}/commands`);
    await expect(commands.approve('nope', { approved: true })).rejects.toThrow(/HTTP 409: approve\("nope"\): no tool call with this id is waiting/);
    await expect(commands.send({ type: 'approve', toolCallId: 'd1' } as never)).rejects.toThrow(/HTTP 400: command "approve": field "approved" must be true or false/);
    await commands.approve(asked.toolCallId, { approved: true, args: { env: 'staging' } });
    await commands.cancelToolCall('w1', 'not needed');
    const events = await all;
    const results = events.filter((e) => e.type === 'MessageEnd' && e.message.role === 'toolResult').map((e) => textOf((e as { message: ToolResultMessage }).message));
    expect(results.sort()).toEqual(['Tool call cancelled: not needed', 'deployed to staging']);
    expect(events.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
  });
});
