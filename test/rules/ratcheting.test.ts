import { describe, expect, it } from 'vitest';
import { validateGateway } from '../../src/rules/index.js';
import { baseGateway, codes, context, ranges, statusUpdate, update } from '../kit/gateways.js';

// The ranges moved: what was valid under the old range is now outside.
const moved = context({ ranges: ranges('10.128.0.0/16') });

describe('ratcheting of unchanged entries on UPDATE', () => {
  const old = baseGateway({ spec: [{ value: '10.96.0.10', routability: 'Cluster' }] });

  it('a label edit is never blocked by a range change made elsewhere', () => {
    const edited = structuredClone(old);
    edited.metadata.labels = { team: 'platform' };
    const result = validateGateway(update(edited, old), moved);
    expect(result.allowed).toBe(true);
    expect(codes(result.ratcheted)).toEqual(['ClusterAddressOutsideServiceRange@spec.addresses[0].value']);
    expect(result.warnings).toEqual([
      'spec.addresses[0]: unchanged, so allowed, although now: Cluster address "10.96.0.10" is outside the service range',
    ]);
    expect(result.auditAnnotations).toEqual({
      ratcheted: 'ClusterAddressOutsideServiceRange@spec.addresses[0].value',
    });
  });

  it('the same entry at another index is still unchanged', () => {
    const reordered = baseGateway({
      spec: [{ routability: 'External' }, { value: '10.96.0.10', routability: 'Cluster' }],
    });
    expect(validateGateway(update(reordered, old), moved).allowed).toBe(true);
  });

  it('a changed value is checked', () => {
    const changed = baseGateway({ spec: [{ value: '10.96.0.11', routability: 'Cluster' }] });
    expect(codes(validateGateway(update(changed, old), moved).violations)).toEqual([
      'ClusterAddressOutsideServiceRange@spec.addresses[0].value',
    ]);
  });

  it('a changed routability is checked', () => {
    const changed = baseGateway({ spec: [{ value: '10.96.0.10', routability: 'External' }] });
    expect(codes(validateGateway(update(changed, old), context()).violations)).toEqual([
      'ExternalAddressInsideServiceRange@spec.addresses[0].value',
    ]);
  });

  it('a changed type (implicit IPAddress made explicit) counts as the same entry', () => {
    const explicit = baseGateway({
      spec: [{ type: 'IPAddress', value: '10.96.0.10', routability: 'Cluster' }],
    });
    expect(validateGateway(update(explicit, old), moved).allowed).toBe(true);
  });

  it('CREATE never ratchets', () => {
    expect(validateGateway({ operation: 'CREATE', object: old, oldObject: old }, moved).allowed).toBe(false);
  });

  it('a controller rewriting only its conditions is not blocked by an old dishonest address', () => {
    const before = baseGateway({ status: [{ value: '192.168.7.7', routability: 'Cluster' }] });
    const after = baseGateway({
      status: [{ value: '192.168.7.7', routability: 'Cluster' }],
      conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
    });
    const result = validateGateway(statusUpdate(after, before), context({ statusPolicy: 'enforce' }));
    expect(result.allowed).toBe(true);
    expect(codes(result.ratcheted)).toEqual(['ClusterAddressOutsideServiceRange@status.addresses[0].value']);
  });

  it('unchanged inconsistent conditions are ratcheted, changed ones are checked', () => {
    const bad = [{ type: 'AddressesAssigned', status: 'True', reason: 'PartiallyAssigned' }];
    const before = baseGateway({ conditions: bad });
    const same = baseGateway({
      status: [{ value: '203.0.113.1', routability: 'External' }],
      conditions: bad,
    });
    expect(validateGateway(statusUpdate(same, before), context({ statusPolicy: 'enforce' })).allowed).toBe(
      true,
    );
    const fresh = baseGateway({ conditions: bad });
    expect(
      validateGateway(statusUpdate(fresh, baseGateway()), context({ statusPolicy: 'enforce' })).allowed,
    ).toBe(false);
  });
});
