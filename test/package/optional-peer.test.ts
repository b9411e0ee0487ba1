import { describe, expect, it } from 'vitest';
import { MissingPeerDependencyError } from '../../src/index.js';
import { importOptionalPeer, loadOptionalPeer } from '../../src/util/optional-peer.js';

// A package name no registry has: importing it fails the way a missing optional peer does.
const ABSENT = '@phi-rx-test/absent-peer';

describe('loadOptionalPeer', () => {
  it('names the missing package, the feature and the install command', async () => {
    const failure = loadOptionalPeer(ABSENT, 'phi-rx/example', () => import(/* @vite-ignore */ `${ABSENT}/index.js`));
    await expect(failure).rejects.toBeInstanceOf(MissingPeerDependencyError);
    await expect(failure).rejects.toMatchObject({
      packageName: ABSENT,
      feature: 'phi-rx/example',
      message: `phi-rx/example needs the package ${ABSENT}, which is not installed. Install it with: npm install ${ABSENT}`,
    });
  });

  it('keeps the original error as the cause', async () => {
    const error = await loadOptionalPeer(ABSENT, 'phi-rx/example', () => import(/* @vite-ignore */ ABSENT)).catch((e: unknown) => e);
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it('lets a different missing module through unchanged', async () => {
    const error = await loadOptionalPeer('@modelcontextprotocol/sdk', 'phi-rx/mcp', () => import(/* @vite-ignore */ ABSENT)).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(MissingPeerDependencyError);
    expect(String(error)).toContain(ABSENT);
  });

  it('lets other failures through unchanged', async () => {
    const boom = new TypeError('boom');
    await expect(loadOptionalPeer(ABSENT, 'phi-rx/example', () => Promise.reject(boom))).rejects.toBe(boom);
  });

  it('resolves the module when it is installed', async () => {
    const rxjs = await loadOptionalPeer('rxjs', 'phi-rx', () => import('rxjs'));
    expect(typeof rxjs.of).toBe('function');
  });
});

describe('importOptionalPeer (a specifier bundlers do not resolve)', () => {
  it('names the package of a missing subpath specifier and the install command', async () => {
    const failure = importOptionalPeer(`${ABSENT}/sub/path.js`, 'phi-rx/example');
    await expect(failure).rejects.toBeInstanceOf(MissingPeerDependencyError);
    await expect(failure).rejects.toMatchObject({ packageName: ABSENT, message: expect.stringContaining(`npm install ${ABSENT}`) as unknown });
  });

  it('resolves an installed package, scoped or not', async () => {
    const [rxjs, utf8] = await Promise.all([
      importOptionalPeer<typeof import('rxjs')>('rxjs', 'phi-rx'),
      importOptionalPeer<typeof import('@smithy/util-utf8')>('@smithy/util-utf8', 'The Bedrock provider'),
    ]);
    expect(typeof rxjs.of).toBe('function');
    expect(utf8.toUtf8(utf8.fromUtf8('ok'))).toBe('ok');
  });
});
