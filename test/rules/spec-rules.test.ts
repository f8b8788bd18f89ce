import { describe, expect, it } from 'vitest';
import { aggregateMessage, validateGateway } from '../../src/rules/index.js';
import { baseGateway, codes, context, create, type Address } from '../kit/gateways.js';
import { rows } from './rows/spec-rules.js';

describe('spec rules (table over one base Gateway)', () => {
  it.each(rows)('$name', ({ address, want, notices, ctx }) => {
    const result = validateGateway(create(baseGateway({ spec: [address] })), context(ctx));
    expect(codes(result.violations)).toEqual(want);
    expect(result.allowed).toBe(want.length === 0);
    expect(codes(result.notices)).toEqual(notices ?? []);
  });
});

describe('spec rules across entries', () => {
  it('reports every failing entry with its own index, dual-stack', () => {
    const result = validateGateway(
      create(
        baseGateway({
          spec: [
            { value: '10.96.0.10', routability: 'Cluster' },
            { value: '10.0.0.5', routability: 'Cluster' },
            { value: 'fd00:10:96::5', routability: 'Cluster' },
            { value: 'fd00:10:96::6', routability: 'External' },
          ],
        }),
      ),
      context(),
    );
    expect(codes(result.violations)).toEqual([
      'ClusterAddressOutsideServiceRange@spec.addresses[1].value',
      'ExternalAddressInsideServiceRange@spec.addresses[3].value',
    ]);
    expect(result.message.startsWith('[spec.addresses[1].value: Invalid value: "10.0.0.5": ')).toBe(true);
    expect(result.message).toContain(', spec.addresses[3].value: ');
  });

  it('spec rules do not run for the status subresource, nor on DELETE', () => {
    const gw = baseGateway({ spec: [{ value: '10.0.0.5', routability: 'Cluster' }] });
    expect(validateGateway({ operation: 'DELETE', object: gw }, context()).allowed).toBe(true);
    expect(
      validateGateway({ operation: 'UPDATE', subResource: 'status', object: gw, oldObject: gw }, context())
        .allowed,
    ).toBe(true);
  });

  it('a malformed addresses field is reported, not thrown', () => {
    const gw = baseGateway();
    (gw.spec as Record<string, unknown>)['addresses'] = 'Cluster';
    const result = validateGateway(create(gw), context());
    expect(codes(result.violations)).toEqual(['AddressesMalformed@spec.addresses']);
    const items = baseGateway({ spec: ['Cluster' as unknown as Address, { routability: 'cluster' }] });
    expect(codes(validateGateway(create(items), context()).violations)).toEqual([
      'AddressesMalformed@spec.addresses[0]',
      'RoutabilityUnsupported@spec.addresses[1].routability',
    ]);
  });

  it('spec-policy warn allows with warnings and an audit annotation', () => {
    const result = validateGateway(
      create(baseGateway({ spec: [{ value: '10.0.0.5', routability: 'Cluster' }] })),
      context({ specPolicy: 'warn' }),
    );
    expect(result.allowed).toBe(true);
    expect(codes(result.warned)).toEqual(['ClusterAddressOutsideServiceRange@spec.addresses[0].value']);
    expect(result.warnings).toEqual([
      'spec.addresses[0].value: Cluster address "10.0.0.5" is outside the service range',
    ]);
    expect(result.auditAnnotations).toEqual({
      warned: 'ClusterAddressOutsideServiceRange@spec.addresses[0].value',
    });
  });

  it('a Gateway with no addresses is allowed with nothing to say', () => {
    const result = validateGateway(create(baseGateway()), context());
    expect(result).toMatchObject({ allowed: true, warnings: [], auditAnnotations: {}, message: '' });
  });
});

describe('ClusterAddressAllocated', () => {
  const allocated = {
    holderOf: (ip: string) =>
      ip === '10.96.0.10'
        ? { group: '', resource: 'services', namespace: 'kube-system', name: 'kube-dns' }
        : ip === '10.96.0.20'
          ? { group: 'gateway.networking.k8s.io', resource: 'gateways', namespace: 'apps', name: 'gw' }
          : ip === '10.96.0.30'
            ? { group: 'gateway.networking.k8s.io', resource: 'gateways', namespace: 'other', name: 'gw' }
            : undefined,
  };
  it.each([
    ['held by a Service', '10.96.0.10', ['ClusterAddressAllocated@spec.addresses[0].value']],
    ['held by this Gateway', '10.96.0.20', []],
    [
      'held by a same-named Gateway elsewhere',
      '10.96.0.30',
      ['ClusterAddressAllocated@spec.addresses[0].value'],
    ],
    ['free', '10.96.0.40', []],
  ])('%s', (_name, value, want) => {
    const result = validateGateway(
      create(baseGateway({ spec: [{ value, routability: 'Cluster' }] })),
      context({ allocatedIPs: allocated }),
    );
    expect(codes(result.violations)).toEqual(want);
  });
  it('names the holder in the message', () => {
    const result = validateGateway(
      create(baseGateway({ spec: [{ value: '10.96.0.10', routability: 'Cluster' }] })),
      context({ allocatedIPs: allocated }),
    );
    expect(result.message).toBe(
      'spec.addresses[0].value: Invalid value: "10.96.0.10": already allocated to services/kube-system/kube-dns',
    );
  });
});

describe('ClusterAddressAllocationUnchecked', () => {
  const unknown = {
    holderOf: () => undefined,
    uncheckedReason: (ip: string) => (ip === '10.96.0.10' ? 'HTTP 403 from the API server' : undefined),
  };
  it('allows with a warning naming the reason when the holder could not be learnt', () => {
    const result = validateGateway(
      create(baseGateway({ spec: [{ value: '10.96.0.10', routability: 'Cluster' }] })),
      context({ allocatedIPs: unknown }),
    );
    expect(result.allowed).toBe(true);
    expect(codes(result.notices)).toEqual(['ClusterAddressAllocationUnchecked@spec.addresses[0].value']);
    expect(result.warnings).toEqual([
      'spec.addresses[0].value: allocation of "10.96.0.10" not checked (HTTP 403 from the API server)',
    ]);
  });
  it('says nothing for a known-free address, or one another rule already denies', () => {
    const free = validateGateway(
      create(baseGateway({ spec: [{ value: '10.96.0.11', routability: 'Cluster' }] })),
      context({ allocatedIPs: unknown }),
    );
    expect(free.warnings).toEqual([]);
    const outside = validateGateway(
      create(baseGateway({ spec: [{ value: '192.0.2.10', routability: 'Cluster' }] })),
      context({ allocatedIPs: { holderOf: () => undefined, uncheckedReason: () => 'down' } }),
    );
    expect(codes(outside.notices)).toEqual([]);
    expect(codes(outside.violations)).toEqual(['ClusterAddressOutsideServiceRange@spec.addresses[0].value']);
  });
});

describe('report size', () => {
  it('caps the aggregated message at 32 violations', () => {
    const one = validateGateway(
      create(baseGateway({ spec: [{ value: '10.0.0.5', routability: 'Cluster' }] })),
      context(),
    ).violations[0]!;
    const message = aggregateMessage(Array.from({ length: 100 }, () => one));
    expect(message.endsWith(', and 68 more]')).toBe(true);
  });

  it('judges a list longer than the CRD allows as one finding, without walking it, under every policy', () => {
    const spec = Array.from({ length: 100_000 }, () => ({ value: '10.0.0.5', routability: 'Cluster' }));
    for (const specPolicy of ['enforce', 'warn'] as const) {
      const result = validateGateway(create(baseGateway({ spec })), context({ specPolicy }));
      expect(result.allowed).toBe(false);
      expect(codes(result.violations)).toEqual(['AddressesTooMany@spec.addresses']);
      expect(result.message).toBe('spec.addresses: Too many: 100000: must have at most 16 items');
    }
    const sixteen = validateGateway(create(baseGateway({ spec: spec.slice(0, 16) })), context());
    expect(sixteen.violations).toHaveLength(16);
  });
});
