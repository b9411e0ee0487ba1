/**
 * AG-UI's own client in a browser: a page bundled with esbuild around `HttpAgent` of `@ag-ui/client`,
 * served on loopback with a phi-rx AG-UI endpoint (`agUiNodeHandler`, scripted model), driven in
 * headless Chromium. The page renders the client's messages as they stream; a run ends in an approval
 * interrupt that the page resumes on a click.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import type { AnyTool } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { agUiNodeHandler } from '../../src/protocols/ag-ui/node/index.js';
import { describeNeeding } from '../support/skip.js';

const executablePath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const haveChromium = existsSync(executablePath);

/** The page's script: AG-UI's client, rendering its messages; `start` and `approve` are what the buttons do. */
const PAGE_SCRIPT = `
import { HttpAgent } from '@ag-ui/client';
const agent = new HttpAgent({ url: '/agent', threadId: 'browser' });
const list = document.querySelector('#messages');
const status = document.querySelector('#status');
function render() {
  list.replaceChildren(...agent.messages.map((m) => {
    const li = document.createElement('li');
    li.className = m.role;
    const calls = (m.toolCalls ?? []).map((c) => ' [' + c.function.name + ' ' + c.function.arguments + ']').join('');
    li.textContent = (typeof m.content === 'string' ? m.content : '') + calls;
    return li;
  }));
}
const streaming = { onTextMessageContentEvent: () => { status.dataset.status = 'streaming'; }, onMessagesChanged: render };
function settle() {
  render();
  status.dataset.status = agent.pendingInterrupts.length > 0 ? 'interrupted' : 'done';
  status.textContent = agent.pendingInterrupts.map((i) => i.reason + ' ' + i.toolCallId).join(', ') || 'done';
}
document.querySelector('#send').addEventListener('click', async () => {
  agent.addMessage({ id: 'u' + agent.messages.length, role: 'user', content: document.querySelector('#prompt').value });
  await agent.runAgent({}, streaming);
  settle();
});
document.querySelector('#approve').addEventListener('click', async () => {
  await agent.runAgent({ resume: agent.pendingInterrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } })) }, streaming);
  settle();
});
`;
const PAGE = `<!doctype html><meta charset="utf-8"><title>AG-UI</title>
<input id="prompt" value="Book a table"><button id="send">send</button><button id="approve">approve</button>
<p id="status" data-status="idle"></p><ul id="messages"></ul><script type="module" src="/page.js"></script>`;

describeNeeding(!haveChromium && `no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)`)('AG-UI client in headless Chromium', () => {
  let browser: Browser;
  let server: Server;
  let url: string;
  let ran = 0;

  beforeAll(async () => {
    const bundle = await build({ stdin: { contents: PAGE_SCRIPT, resolveDir: process.cwd(), loader: 'js' }, bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
    const script = bundle.outputFiles[0]!.text;
    const book: AnyTool = { name: 'bookTable', label: 'book', description: 'Books a table', parameters: { type: 'object' }, needsApproval: true, execute: () => `booked (${++ran})` };
    const provider = scriptedProvider([
      { text: 'Let me book that for you.', toolCalls: [{ name: 'bookTable', id: 'b1', arguments: { seats: 2 } }], chunkDelay: 10 },
      { text: 'Your table for two is booked.', chunkDelay: 10 },
    ]);
    const agent = agUiNodeHandler({ config: { model: scriptedModel(), provider }, tools: [book], authorize: 'allow-all' });
    server = createServer((req, res) => {
      if (req.url === '/agent') return agent(req, res);
      if (req.url === '/page.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    server?.close();
  });

  it('streams a run into the page, stops at the approval interrupt, and resumes it on a click', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.click('#send');
    await page.waitForSelector('#status[data-status="interrupted"]', { timeout: 20_000 });
    expect(await page.textContent('#status')).toBe('tool_approval b1');
    expect(await page.locator('#messages li').allTextContents()).toEqual(['Book a table', 'Let me book that for you. [bookTable {"seats":2}]']);
    expect(ran).toBe(0);
    await page.click('#approve');
    await page.waitForSelector('#status[data-status="done"]', { timeout: 20_000 });
    expect(ran).toBe(1);
    expect(await page.locator('#messages li').allTextContents()).toEqual(['Book a table', 'Let me book that for you. [bookTable {"seats":2}]', 'booked (1)', 'Your table for two is booked.']);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
