import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Third-party specs live outside the repository; tests that need them skip (visibly) without them. */
export const openApiFixtures = path.join(process.env.PHI_RX_FIXTURES ?? path.resolve(repoRoot, '../shared/fixtures'), 'openapi');
export const haveOpenApiFixtures = existsSync(path.join(openApiFixtures, 'oai__petstore.yaml'));
if (!haveOpenApiFixtures) console.warn(`OpenAPI fixtures not found in ${openApiFixtures}; set PHI_RX_FIXTURES. Skipping the tests that need them.`);

export const fixture = (name: string): string => path.join(openApiFixtures, name);
