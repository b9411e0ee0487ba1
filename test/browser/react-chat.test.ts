import { afterAll, beforeAll, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startReactChatServer, type ReactChatServer } from '../../examples/react-chat/server.js';
import { STORY } from '../../examples/react-chat/agent.js';
import { describeNeeding } from '../support/skip.js';

// Debian's chromium (installed by .ci/run); Playwright's own browser download is not reachable.
const executablePath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

describeNeeding(!existsSync(executablePath) && `no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)`)('react-chat demo: useChat (@ai-sdk/react) against phi-rx/ai-sdk in headless Chromium', () => {
  let browser: Browser;
  let demo: ReactChatServer;
  beforeAll(async () => {
    demo = await startReactChatServer({ chunkDelayMs: 30 });
    browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await demo?.close();
  });

  async function open(): Promise<Page & { errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(demo.url);
    await page.waitForSelector('#status[data-status="ready"]');
    return Object.assign(page, { errors });
  }

  async function ask(page: Page, text: string): Promise<void> {
    await page.fill('#prompt', text);
    await page.click('#send');
  }

  const lastAnswer = (page: Page) => page.locator('.msg.assistant').last();

  it('streams text and a tool call with its result', async () => {
    const page = await open();
    await ask(page, 'What is the weather?');
    await page.waitForSelector('.tool[data-tool="weather"][data-state="output-available"] .result');
    await page.waitForSelector('#status[data-status="ready"]');
    expect(await page.textContent('.tool .result')).toBe('Sunny and 21°C in Paris');
    expect(await lastAnswer(page).locator('.text').allTextContents()).toEqual(['Let me check.', 'Done: Sunny and 21°C in Paris.']);
    expect(page.errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('asks for an approval, which the page answers by a click; the run goes on', async () => {
    const page = await open();
    await ask(page, 'Please deploy');
    await page.click('.tool[data-tool="deploy"] button.approve');
    await page.waitForSelector('.tool[data-tool="deploy"][data-state="output-available"]');
    await page.waitForFunction(() => Array.from(document.querySelectorAll('.msg.assistant')).at(-1)?.textContent?.includes('Done: Deployed to production.') && document.querySelector('#status')?.getAttribute('data-status') === 'ready');
    expect(await page.locator('.msg.assistant').count()).toBe(1); // one message, continued after the approval
    expect(page.errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('a reload while the approval waits shows it again; answered after the reload, the run goes on', async () => {
    const page = await open();
    await ask(page, 'Please deploy');
    await page.waitForSelector('.tool[data-tool="deploy"] button.approve');
    await page.reload();
    await page.click('.tool[data-tool="deploy"] button.approve', { timeout: 30_000 });
    await page.waitForFunction(() => Array.from(document.querySelectorAll('.msg.assistant')).at(-1)?.textContent?.includes('Done: Deployed to production.') && document.querySelector('#status')?.getAttribute('data-status') === 'ready');
    expect(await page.locator('.msg.assistant').count()).toBe(1);
    expect(page.errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('stop ends the reply and the run on the server', async () => {
    const page = await open();
    await ask(page, 'Tell me a story');
    await page.waitForFunction(() => (document.querySelector('.msg.assistant .text')?.textContent ?? '').length > 20);
    await page.click('#stop');
    await page.waitForSelector('#status[data-status="ready"]');
    const chatId = new URL(page.url()).searchParams.get('chat')!;
    await expect.poll(() => demo.hub.chat(chatId)?.isOver, { timeout: 10_000 }).toBe(true);
    expect(demo.hub.chat(chatId)!.chunks.at(-1)).toMatchObject({ type: 'abort' });
    expect((await lastAnswer(page).textContent())!.length).toBeLessThan(STORY.length);
    await page.close();
  }, 60_000);

  it('a reload mid-reply resumes it: the whole story, nothing twice', async () => {
    const page = await open();
    await ask(page, 'Tell me a story');
    await page.waitForFunction(() => (document.querySelector('.msg.assistant .text')?.textContent ?? '').length > 20);
    await page.reload();
    await page.waitForFunction((story) => document.querySelector('.msg.assistant .text')?.textContent === story, STORY, { timeout: 30_000 });
    await page.waitForSelector('#status[data-status="ready"]');
    expect(await page.locator('.msg.assistant').count()).toBe(1);
    expect(await page.locator('.msg.user').allTextContents()).toEqual(['Tell me a story']);
    expect(page.errors).toEqual([]);
    await page.close();
  }, 60_000);
});
