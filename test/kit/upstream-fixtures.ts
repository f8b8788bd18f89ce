/**
 * Upstream's test data, copied into the repository (test/fixtures/upstream;
 * its README names each file's source, tag or commit, and licence).
 */
import { join } from 'node:path';

export const UPSTREAM_FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'upstream');
/** Gateway API v1.6.1: every example and conformance file that holds a Gateway. */
export const GATEWAY_API_EXAMPLES = join(UPSTREAM_FIXTURES, 'gateway-api-v1.6.1', 'examples');
/** Gateway API v1.6.1: the Gateway CRD of each channel, `<channel>-gateways.yaml`. */
export const GATEWAY_API_CRDS = join(UPSTREAM_FIXTURES, 'gateway-api-v1.6.1', 'crds');
/** Upstream's GEP-5093 work after the Provisional text: CRD test table, conformance manifests. */
export const GEP_5093_UPSTREAM = join(UPSTREAM_FIXTURES, 'gep-5093-upstream');
