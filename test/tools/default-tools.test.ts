import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as tools from '../../src/tools/index.js';
import { runTool, textOf } from './helpers.js';

describe('defaultTools', () => {
  it('returns the six built-in tools in order, each with a label, a description and an object schema', () => {
    const set = tools.defaultTools({ cwd: '/tmp' });
    expect(set.map((t) => t.name)).toEqual(['bash', 'read_file', 'write_file', 'edit_file', 'list_files', 'search']);
    for (const tool of set) {
      expect(tool.label).not.toBe('');
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.parameters).toMatchObject({ type: 'object' });
      expect(tool.validate).toBeTypeOf('function');
    }
    expect(set[0]?.parameters).toMatchObject({ required: ['command'] });
    expect(set[3]?.parameters).toMatchObject({ required: ['path', 'oldText', 'newText'] });
  });

  it('passes per-tool tuning through and states the limits in the descriptions', () => {
    const set = tools.defaultTools({ cwd: '/tmp', bash: { timeoutMs: 5_000 }, listFiles: { maxEntries: 7 }, search: { maxResults: 9 } });
    expect(set[0]?.description).toContain('Default time limit 5 s');
    expect(set[0]?.description).toContain('256 KB per stream');
    expect(set[1]?.description).toContain('1 MB per call');
    expect(set[1]?.description).toContain('up to 20 MB');
    expect(set[4]?.description).toContain('at most 7 entries');
    expect(set[5]?.description).toContain('at most 9 by default');
  });

  it('exports each factory and defineTool', async () => {
    for (const name of ['bashTool', 'readFileTool', 'writeFileTool', 'editFileTool', 'listFilesTool', 'searchTool', 'defineTool']) {
      expect(tools).toHaveProperty(name);
    }
    const shout = tools.defineTool({
      name: 'shout',
      description: 'Upper-cases text',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => text.toUpperCase(),
    });
    expect(textOf((await runTool(shout, { text: 'hey' })).result)).toBe('HEY');
    expect((await runTool(shout, { text: 3 })).invalid).toContain('arguments.text');
  });
});
