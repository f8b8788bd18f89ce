/**
 * The Gateways `verify` sends as server-side dry runs (never stored): one the
 * webhook admits, one it can never admit, and the texts it must answer with.
 * The expected texts come from the rule catalogue itself, so a reworded rule
 * message changes what verify expects in the same commit.
 */
import { CATALOGUE } from '../rules/index.js';

/** An address the probes use: RFC 5737 TEST-NET-1, documentation only, never a cluster's service range. */
export const OUTSIDE_ADDRESS = '192.0.2.10';

/** A Hostname with routability Cluster: accepted by both GEP-5093 revisions and by every range. */
export const ADMITTED_ADDRESS = {
  type: 'Hostname',
  value: 'routability-verify.invalid',
  routability: 'Cluster',
} as const;

/** A Cluster IP outside every service range: denied by ClusterAddressOutsideServiceRange. */
export const DENIED_ADDRESS = { type: 'IPAddress', value: OUTSIDE_ADDRESS, routability: 'Cluster' } as const;

const DENIED_FIELD = 'spec.addresses[0].value';

export function probeGateway(
  namespace: string,
  name: string,
  address: Readonly<Record<string, string>>,
): Record<string, unknown> {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    // generateName: a stored Gateway of the same name would make a create fail with AlreadyExists.
    metadata: {
      generateName: `${name}-`,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'routability-webhook-verify' },
    },
    spec: {
      gatewayClassName: 'routability-verify',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      addresses: [{ ...address }],
    },
  };
}

/** What comes before the service ranges (which only the webhook knows) in a text rendered with a marker. */
function before(text: string, marker: string): string {
  const at = text.indexOf(marker);
  return at < 0 ? text : text.slice(0, at);
}

const MARKER = '\u0000ranges\u0000';

/**
 * The start of the denial the API server relays for the denied probe:
 * `admission webhook "NAME" denied the request: spec.addresses[0].value: Invalid value: …`,
 * up to the service ranges.
 */
export function expectedDenial(webhookName: string): string {
  const message = CATALOGUE.ClusterAddressOutsideServiceRange.message(DENIED_FIELD, {
    value: OUTSIDE_ADDRESS,
    ranges: MARKER,
  });
  return `admission webhook "${webhookName}" denied the request: ${before(message, MARKER)}`;
}

/** The warning the webhook answers with for the denied probe under `--spec-policy warn`. */
export function expectedWarning(): string {
  return CATALOGUE.ClusterAddressOutsideServiceRange.warning(DENIED_FIELD, {
    value: OUTSIDE_ADDRESS,
    ranges: '',
  });
}
