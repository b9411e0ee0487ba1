import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startDemoServer, type DemoServer } from '../../examples/web/server.js';
import { FINAL_REPLY } from '../../examples/web/agent.js';
import { describeNeeding } from '../support/skip.js';

// Debian's chromium (installed by .ci/run); Playwright's own browser download is not reachable.
const executablePath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const haveChromium = existsSync(executablePath);
// The README's screenshot is refreshed only on request (PHI_RX_UPDATE_SCREENSHOT=1): a test run leaves the tree clean.
const screenshot = process.env['PHI_RX_UPDATE_SCREENSHOT'] === '1'
  ? fileURLToPath(new URL('../../docs/web-demo.png', import.meta.url))
  : join(tmpdir(), `phi-rx-web-demo-${process.pid}.png`);

describeNeeding(!haveChromium && `no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)`)('web demo in headless Chromium', () => {
  let browser: Browser;
  let demo: DemoServer;
  beforeAll(async () => {
    // The steer is typed while the tool runs (3 progress steps): a second apart, so that a loaded machine (three browser
    // test files at once) still lands it mid-run; at 300 ms it sometimes came after the answer (two final bubbles).
    demo = await startDemoServer({ scripted: true, chunkDelayMs: 25, progressMs: 1000 });
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    if (process.env['PHI_RX_UPDATE_SCREENSHOT'] !== '1') rmSync(screenshot, { force: true });
  });

  async function open(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 900, height: 640 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(demo.url);
    return Object.assign(page, { errors });
  }

  it('streams the reply, shows tool progress, takes a steer mid-run, and resumes a dropped connection without a duplicated character', async () => {
    const page = await open();
    await page.fill('#prompt', 'How do reactive agent UIs work?');
    await page.click('#send');
    // steer while the tool runs (its progress lines appear one by one)
    await page.waitForSelector('.tool[data-status="running"]');
    await page.fill('#steer', 'Keep it short');
    await page.click('#steer-send');
    await page.waitForSelector('.tool[data-status="done"] .result');
    expect(await page.locator('.tool .progress').allTextContents()).toEqual([
      '… searching How do reactive agent UIs work?',
      '… reading How do reactive agent UIs work?',
      '… summarising How do reactive agent UIs work?',
    ]);
    // mid-reply, the network drops every event stream; the page reconnects with Last-Event-ID
    await page.waitForFunction(() => (document.querySelector('.streaming')?.textContent ?? '').length > 40);
    const before = demo.eventRequests.length;
    demo.dropEventStreams();
    await page.waitForSelector('#status[data-status="ended"]', { timeout: 20_000 });
    expect(demo.eventRequests.length).toBeGreaterThan(before);
    expect(demo.eventRequests.at(-1)).toMatch(/^\d+$/);
    expect(await page.textContent('#status')).toBe('ended: stop');
    const bubbles = await page.locator('.msg.assistant').allTextContents();
    expect(bubbles.at(-1)).toBe(`You also said: "Keep it short". ${FINAL_REPLY}`);
    expect(bubbles.filter((b) => b.includes(FINAL_REPLY))).toHaveLength(1); // the steer landed mid-run, before the answer
    expect(await page.locator('.msg.user').allTextContents()).toEqual(['How do reactive agent UIs work?', 'Keep it short']);
    await page.screenshot({ path: screenshot, fullPage: true });
    expect((page as Page & { errors: string[] }).errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('the abort button stops the run', async () => {
    const page = await open();
    await page.click('#send');
    await page.waitForSelector('.tool[data-status="running"]');
    await page.click('#abort');
    await page.waitForSelector('#status[data-status="ended"]', { timeout: 20_000 });
    expect(await page.textContent('#status')).toBe('ended: aborted');
    await page.close();
  }, 60_000);
});
