import { describe, expect, it } from 'vitest';
import { main } from '../../examples/tools.js';

describe('examples/tools.ts', () => {
  it('runs every built-in tool on a confined temp workspace', async () => {
    const lines: string[] = [];
    const steps = await main((line) => lines.push(line));
    expect(steps.map((s) => s.tool)).toEqual([
      'write_file',
      'edit_file',
      'read_file',
      'write_file',
      'write_file',
      'list_files',
      'search',
      'bash',
      'read_file',
    ]);
    expect(steps[2]?.text).toBe('   1 | export const greet = (who: string) => `Hi, ${who}`;');
    expect(steps[5]?.text).toBe('.gitignore\nsrc/\nsrc/greet.ts');
    expect(steps[6]?.text).toBe('src/greet.ts:1: export const greet = (who: string) => `Hi, ${who}`;');
    expect(steps[7]).toEqual({ tool: 'bash', text: 'greet.ts\n[stderr]\ndone\nExit code: 2', isError: false });
    expect(steps[8]?.isError).toBe(true);
    expect(steps[8]?.text).toContain('outside the workspace root');
    expect(lines.some((l) => l.includes('...greet.ts'))).toBe(true);
  });
});
