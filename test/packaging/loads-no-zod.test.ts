import { expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { packagesLoadedBySteps, srcModule } from '../support/loaded-packages.js';

/** zod as this repository resolves it (the steps script runs from a temporary directory). */
const zodModule = JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve('zod')).href);

// zod is the user's own peer: phi-rx's entry points, and its checks of what it reads back
// (saved messages, sessions, tool arguments), load none of it. The last step loads zod on purpose,
// which shows that the hook would have seen it earlier.
it('phi-rx, phi-rx/testing, phi-rx/session, phi-rx/tools and phi-rx/config load no zod, even when used; a user\'s zod schema works', async () => {
  const loaded = await packagesLoadedBySteps(`
const phi = await import(${srcModule('index.ts')});
step('root');
const testing = await import(${srcModule('testing/index.ts')});
step('testing');
const session = await import(${srcModule('session/index.ts')});
step('session');
const tools = await import(${srcModule('tools/index.ts')});
step('tools');
const config = await import(${srcModule('config/index.ts')});
await config.parseAgentConfig('{ "model": { "provider": "scripted", "id": "m" }, "limits": { "maxTurns": 3 } }', 'agent.json');
step('config');

const agent = new phi.BasicAgent({ model: testing.scriptedModel(), provider: testing.scriptedProvider([]) });
agent.restoreMessages(JSON.stringify([{ role: 'user', content: 'hi' }]));
if (agent.messages.length !== 1) throw new Error('restoreMessages lost the message');
const sample = testing.sampleSession('s1', 'a1');
if (!session.parseSession(JSON.parse(JSON.stringify(sample))).success) throw new Error('the sample session did not parse');
const read = tools.readFileTool({ cwd: process.cwd() });
if (read.validate({ path: 1 }).ok) throw new Error('a numeric path passed validation');
const json = phi.defineTool({ name: 'add', description: 'adds', parameters: { type: 'object', properties: { a: { type: 'number' } } }, execute: () => 'ok' });
if (json.validate({ a: 'x' }).ok) throw new Error('a string passed a number schema');
step('used');

const { z } = await import(${zodModule});
const zodTool = phi.defineTool({ name: 'zadd', description: 'adds', parameters: z.object({ a: z.number() }), execute: () => 'ok' });
if (zodTool.validate({ a: 'x' }).ok || zodTool.parameters.type !== 'object') throw new Error('the zod tool does not validate');
step('zod');
`);
  for (const step of ['root', 'testing', 'session', 'tools', 'config', 'used']) expect(loaded(step), `packages loaded by step "${step}"`).not.toContain('zod');
  expect(loaded('root')).toContain('rxjs');
  expect(loaded('zod')).toContain('zod');
}, 60_000);
