import { describe, expect, it } from 'vitest';
import { TOOL_NAME_PATTERN, safeToolName, uniqueToolName } from '../../src/tools/tool-name.js';

describe('safeToolName', () => {
  it('prefixes with `__` and replaces characters providers reject with `_`', () => {
    expect(safeToolName('get pet/{id}', 'petstore')).toBe('petstore__get_pet__id_');
    expect(safeToolName('trigger-long-running-operation')).toBe('trigger-long-running-operation');
  });

  it('cuts to 64 characters and never returns an empty name', () => {
    const long = safeToolName('x'.repeat(100), 'server');
    expect(long).toHaveLength(64);
    expect(long.startsWith('server__x')).toBe(true);
    expect(safeToolName('')).toBe('_');
  });

  it('always yields a name defineTool accepts', () => {
    for (const name of ['ünïcödé', 'a.b.c', ' ', 'x'.repeat(70), 'ok_name-1']) expect(safeToolName(name, 'p')).toMatch(TOOL_NAME_PATTERN);
  });
});

describe('uniqueToolName', () => {
  it('keeps a free name and numbers a taken one, still within 64 characters', () => {
    expect(uniqueToolName('echo', new Set())).toBe('echo');
    expect(uniqueToolName('echo', new Set(['echo', 'echo_2']))).toBe('echo_3');
    const long = 'y'.repeat(64);
    const renamed = uniqueToolName(long, new Set([long]));
    expect(renamed).toBe(`${'y'.repeat(62)}_2`);
    expect(renamed).toMatch(TOOL_NAME_PATTERN);
  });
});
