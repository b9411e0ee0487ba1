import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Third-party specs live outside the repository; tests that need them skip (visibly) without them. */
export const openApiFixtures = path.join(process.env.PHI_RX_FIXTURES ?? path.resolve(repoRoot, '../shared/fixtures'), 'openapi');
export const haveOpenApiFixtures = existsSync(path.join(openApiFixtures, 'oai__petstore.yaml'));
/** What is missing for the tests that need the specs (printed by the group that skips), or undefined. */
export const openApiFixturesMissing = haveOpenApiFixtures ? undefined : `no OpenAPI specs in ${openApiFixtures} (set PHI_RX_FIXTURES)`;

export const fixture = (name: string): string => path.join(openApiFixtures, name);
