/** The audit judges allocated addresses with the same lookups the webhook makes. */
import { describe, expect, it } from 'vitest';
import { judgeWithContext } from '../../src/audit/judge.js';
import { allocationPrefetch } from '../../src/inputs/allocations/allocation-prefetch.js';
import type { AllocatedIPSource } from '../../src/inputs/allocations/types.js';
import { context } from '../kit/gateways.js';

function gateway(value: string) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'apps' },
    spec: {
      gatewayClassName: 'example',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      addresses: [{ type: 'IPAddress', value, routability: 'Cluster' }],
    },
  };
}

describe('audit judge with allocated-IP lookups', () => {
  it('looks up only the addresses the rules ask about, and reports the holder', async () => {
    const asked: string[][] = [];
    const source: AllocatedIPSource = {
      lookup: async (ips) => {
        asked.push([...ips]);
        return {
          holderOf: (ip) =>
            ip === '10.96.0.10'
              ? { group: '', resource: 'services', namespace: 'kube-system', name: 'dns' }
              : undefined,
        };
      },
      describe: () => ({}),
      close: async () => {},
    };
    const judge = judgeWithContext(context(), allocationPrefetch(source));
    const held = (await judge(gateway('10.96.0.10'))).findings;
    expect(held.map((f) => f.code)).toEqual(['ClusterAddressAllocated']);
    expect(held[0]!.message).toContain('already allocated to services/kube-system/dns');
    expect((await judge(gateway('10.96.0.11'))).findings).toEqual([]);
    // Outside the range: another rule answers, nothing is looked up.
    expect((await judge(gateway('192.0.2.1'))).findings.map((f) => f.code)).toEqual([
      'ClusterAddressOutsideServiceRange',
    ]);
    expect(asked).toEqual([['10.96.0.10'], ['10.96.0.11']]);
  });
});
