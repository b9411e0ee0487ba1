import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../examples/ag-ui.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/ag-ui', () => {
  it('serves three AG-UI runs to HttpAgent: a server tool, a frontend tool round trip, an approval interrupt resumed', async () => {
    const lines: string[] = [];
    const messages = await main((line) => lines.push(line));
    expect(lines).toContain('  pending for the client: d1');
    expect(lines).toContain('  interrupts: tool_approval for b1');
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Done: booked at Chez Ada.' });
  });

  it('runs as a program', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', 'examples/ag-ui.ts'], { cwd: repoRoot, timeout: 60_000 });
    expect(stdout).toMatch(/run 3: the user approves, the run resumes\n {2}tool: b1 → booked at Chez Ada\n {2}assistant: Done: booked at Chez Ada\./);
  }, 90_000);
});
