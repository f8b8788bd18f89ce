/** One base Gateway and builders for table tests across layers. */
import { ServiceRanges, type RuleContext } from '../../src/rules/index.js';

export type Address = Record<string, unknown>;

export function baseGateway(over: { spec?: Address[]; status?: Address[]; conditions?: Address[] } = {}) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'apps', labels: { team: 'web' } },
    spec: {
      gatewayClassName: 'example',
      ...(over.spec ? { addresses: over.spec } : {}),
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
    },
    ...(over.status || over.conditions
      ? {
          status: {
            ...(over.status ? { addresses: over.status } : {}),
            ...(over.conditions ? { conditions: over.conditions } : {}),
          },
        }
      : {}),
  };
}

export function ranges(...cidrs: (string | { cidr: string; terminating?: boolean })[]): ServiceRanges {
  const parsed = ServiceRanges.parse(cidrs);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.ranges;
}

export const DUAL_STACK = ranges('10.96.0.0/12', 'fd00:10:96::/112');

export function context(over: Partial<RuleContext> = {}): RuleContext {
  return {
    ranges: DUAL_STACK,
    clusterDomain: 'cluster.local',
    allowedRoutability: undefined,
    specPolicy: 'enforce',
    statusPolicy: 'enforce',
    ...over,
  };
}

export function create(object: unknown) {
  return { operation: 'CREATE', subResource: '', namespace: 'apps', name: 'gw', object };
}

export function update(object: unknown, oldObject: unknown) {
  return { operation: 'UPDATE', subResource: '', namespace: 'apps', name: 'gw', object, oldObject };
}

export function statusUpdate(object: unknown, oldObject?: unknown) {
  return { operation: 'UPDATE', subResource: 'status', namespace: 'apps', name: 'gw', object, oldObject };
}

/** `CODE@field` for compact assertions. */
export function codes(findings: readonly { code: string; field: { toString(): string } }[]): string[] {
  return findings.map((f) => `${f.code}@${f.field.toString()}`);
}
