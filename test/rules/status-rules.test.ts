import { describe, expect, it } from 'vitest';
import { mutateGateway, validateGateway } from '../../src/rules/index.js';
import { baseGateway, codes, context, statusUpdate, type Address } from '../kit/gateways.js';
import { rows } from './rows/status-rules.js';

describe('status rules (table over one base Gateway)', () => {
  it.each(rows)('$name', ({ spec, status, conditions, want, notices, ctx }) => {
    const gw = baseGateway({
      ...(spec ? { spec } : {}),
      ...(status ? { status } : {}),
      ...(conditions ? { conditions } : {}),
    });
    const result = validateGateway(statusUpdate(gw, baseGateway({ spec: spec ?? [] })), context(ctx));
    expect(codes(result.violations)).toEqual(want);
    expect(codes(result.notices)).toEqual(notices ?? []);
  });
});

describe('status policy', () => {
  const dishonest = baseGateway({ status: [{ value: '192.168.7.7', routability: 'Cluster' }] });
  it('warn (the default) allows, warns compactly, and annotates the audit log', () => {
    const result = validateGateway(statusUpdate(dishonest, baseGateway()), context({ statusPolicy: 'warn' }));
    expect(result.allowed).toBe(true);
    expect(result.warnings).toEqual([
      'status.addresses[0].value: Cluster address "192.168.7.7" is outside the service range',
    ]);
    expect(result.auditAnnotations).toEqual({
      warned: 'ClusterAddressOutsideServiceRange@status.addresses[0].value',
    });
  });
  it('enforce denies', () => {
    const result = validateGateway(
      statusUpdate(dishonest, baseGateway()),
      context({ statusPolicy: 'enforce' }),
    );
    expect(result.allowed).toBe(false);
    expect(result.message).toBe(
      'status.addresses[0].value: Invalid value: "192.168.7.7": routability Cluster requires an address inside the service range (10.96.0.0/12, fd00:10:96::/112)',
    );
  });
  it('spec policy does not govern status findings', () => {
    const result = validateGateway(
      statusUpdate(dishonest, baseGateway()),
      context({ specPolicy: 'enforce', statusPolicy: 'warn' }),
    );
    expect(result.allowed).toBe(true);
  });
});

describe('status defaulting (mutation)', () => {
  it('adds routability External to each status address without one, by index', () => {
    const gw = baseGateway({
      status: [
        { value: '203.0.113.10' },
        { value: '10.96.0.42', routability: 'Cluster' },
        { type: 'Hostname', value: 'gw.example.com' },
      ],
    });
    const result = mutateGateway(statusUpdate(gw, gw), context());
    expect(result.patch).toEqual([
      { op: 'add', path: '/status/addresses/0/routability', value: 'External' },
      { op: 'add', path: '/status/addresses/2/routability', value: 'External' },
    ]);
    expect(result.notices).toEqual([]);
  });

  it('is idempotent: the patched object yields no operations', () => {
    const gw = baseGateway({
      status: [{ value: '203.0.113.10' }, { value: '10.96.0.42', routability: null }],
    });
    const first = mutateGateway(statusUpdate(gw, gw), context());
    expect(first.patch).toHaveLength(2);
    const patched = structuredClone(gw) as { status: { addresses: Address[] } };
    for (const op of first.patch)
      patched.status.addresses[Number(op.path.split('/')[3])]!['routability'] = op.value;
    expect(mutateGateway(statusUpdate(patched, gw), context()).patch).toEqual([]);
  });

  it('warns when it defaults an address that looks cluster-internal', () => {
    const gw = baseGateway({
      status: [{ value: '10.96.0.42' }, { type: 'Hostname', value: 'gw.apps.svc.cluster.local' }],
    });
    const result = mutateGateway(statusUpdate(gw, gw), context());
    expect(codes(result.notices)).toEqual([
      'StatusDefaultedExternal@status.addresses[0]',
      'StatusDefaultedExternal@status.addresses[1]',
    ]);
    for (const f of result.notices) expect(f.warning.length).toBeLessThanOrEqual(120);
  });

  it.each([
    ['CREATE of the main resource', { operation: 'CREATE', subResource: '' }],
    ['UPDATE of the main resource', { operation: 'UPDATE', subResource: '' }],
    ['DELETE', { operation: 'DELETE', subResource: '' }],
  ])('does nothing on %s', (_name, op) => {
    const gw = baseGateway({ status: [{ value: '203.0.113.10' }] });
    expect(mutateGateway({ ...op, object: gw, oldObject: gw }, context()).patch).toEqual([]);
  });

  it('skips entries that are not objects and a status without addresses', () => {
    const gw = baseGateway({ status: ['x' as unknown as Address, { value: '203.0.113.10' }] });
    expect(mutateGateway(statusUpdate(gw, gw), context()).patch).toEqual([
      { op: 'add', path: '/status/addresses/1/routability', value: 'External' },
    ]);
    expect(mutateGateway(statusUpdate(baseGateway(), baseGateway()), context()).patch).toEqual([]);
  });
});
