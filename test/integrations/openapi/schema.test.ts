import { describe, expect, it } from 'vitest';
import { openApiToolsFromSpec, truncateUtf8 } from '../../../src/integrations/openapi/index.js';

describe('truncateUtf8', () => {
  const bytes = (s: string) => new TextEncoder().encode(s);

  it('keeps text within the limit whole', () => {
    expect(truncateUtf8(bytes('héllo'), 6)).toEqual({ text: 'héllo', truncated: false });
  });

  it('never splits a 2-, 3- or 4-byte character', () => {
    expect(truncateUtf8(bytes('aé'), 2)).toEqual({ text: 'a', truncated: true });
    expect(truncateUtf8(bytes('a€b'), 3)).toEqual({ text: 'a', truncated: true });
    expect(truncateUtf8(bytes('a€b'), 4)).toEqual({ text: 'a€', truncated: true });
    expect(truncateUtf8(bytes('a😀'), 4)).toEqual({ text: 'a', truncated: true });
    expect(truncateUtf8(bytes('😀😀'), 4)).toEqual({ text: '😀', truncated: true });
  });
});

describe('parameter schemas from dereferenced specs', () => {
  const spec = {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    servers: [{ url: 'http://127.0.0.1:9' }],
    paths: {
      '/nodes': {
        post: {
          operationId: 'addNode',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
          responses: { 200: { description: 'ok' } },
        },
      },
    },
    components: {
      schemas: {
        Node: {
          type: 'object',
          example: { name: 'root' },
          'x-internal': true,
          properties: {
            name: { type: 'string', nullable: true, xml: { attribute: true } },
            example: { type: 'string', description: 'a property that happens to be called example' },
            children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
          },
        },
      },
    },
  };

  it('cuts recursion, turns nullable into a null type and drops OpenAPI-only noise', async () => {
    const { tools } = await openApiToolsFromSpec(spec);
    const parameters = tools[0]?.parameters;
    expect(() => JSON.stringify(parameters)).not.toThrow();
    expect(parameters).toEqual({
      type: 'object',
      properties: {
        body: {
          type: 'object',
          properties: {
            name: { type: ['string', 'null'] },
            example: { type: 'string', description: 'a property that happens to be called example' },
            children: { type: 'array', items: { description: 'Recursive: same structure as an enclosing object' } },
          },
        },
      },
      required: ['body'],
    });
  });
});
