/**
 * Table rows for the engine fixes of the adversarial review (ratcheting by
 * effective identity, malformed values under every policy, AddressesAssigned
 * MUSTs, the global-range exception, in-cluster names, messages) and for
 * upstream's experimental revision of GEP-5093 as a parameter of the context.
 */
import { describe, expect, it } from 'vitest';
import { mutateGateway, validateGateway } from '../../src/rules/index.js';
import { clampWarning } from '../../src/rules/messages.js';
import { baseGateway, codes, context, ranges, statusUpdate, update } from '../kit/gateways.js';
import { EXP, run, rows, type Row } from './rows/revision-and-review-fixes.js';

describe('engine rows (issue 10 fixes, experimental revision)', () => {
  it.each(rows)('$name', (row) => {
    const result = run(row);
    expect(codes(result.violations)).toEqual(row.want);
    expect(codes(result.notices)).toEqual(row.notices ?? []);
  });
});

describe('ratcheting by effective identity (issue 10 defect 1)', () => {
  it('a status stored unset equals the same entry after the mutation defaulted it to External', () => {
    const stored = baseGateway({ status: [{ value: '10.96.0.42' }] });
    const written = baseGateway({
      status: [{ value: '10.96.0.42', routability: 'External' }],
      conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
    });
    const result = validateGateway(statusUpdate(written, stored), context({ statusPolicy: 'enforce' }));
    expect(result.allowed).toBe(true);
    expect(codes(result.ratcheted)).toEqual(['ExternalAddressInsideServiceRange@status.addresses[0].value']);
  });

  it('IP values compare canonically', () => {
    const old = baseGateway({ spec: [{ value: 'FD00:10:96::A', routability: 'Cluster' }] });
    const now = baseGateway({ spec: [{ value: 'fd00:10:96::a', routability: 'Cluster' }] });
    const moved = context({ ranges: ranges('10.96.0.0/12') });
    expect(validateGateway(update(now, old), moved).allowed).toBe(true);
  });

  it('experimental: unset and "" are the same entry', () => {
    const stored = baseGateway({ status: [{ value: '10.96.0.42', routability: 'Cluster' }, { value: 'x' }] });
    const written = baseGateway({
      status: [
        { value: '10.96.0.42', routability: 'Cluster' },
        { value: 'x', routability: '' },
      ],
    });
    const ctx = context({
      revision: 'experimental',
      statusPolicy: 'enforce',
      ranges: ranges('10.128.0.0/16'),
    });
    expect(validateGateway(statusUpdate(written, stored), ctx).allowed).toBe(true);
  });
});

describe('mutation by revision', () => {
  const gw = baseGateway({ status: [{ value: '203.0.113.10' }, { value: '10.96.0.5', routability: '' }] });
  it('provisional: unset and "" become External', () => {
    expect(mutateGateway(statusUpdate(gw, gw), context()).patch).toEqual([
      { op: 'add', path: '/status/addresses/0/routability', value: 'External' },
      { op: 'add', path: '/status/addresses/1/routability', value: 'External' },
    ]);
  });
  it('experimental: unset becomes an explicit ""; "" is left alone', () => {
    expect(mutateGateway(statusUpdate(gw, gw), context(EXP)).patch).toEqual([
      { op: 'add', path: '/status/addresses/0/routability', value: '' },
    ]);
  });
  it('a status list longer than the CRD allows gets no patch and one warning', () => {
    const big = baseGateway({ status: Array.from({ length: 100_000 }, () => ({ value: '203.0.113.10' })) });
    const result = mutateGateway(statusUpdate(big, big), context());
    expect(result.patch).toEqual([]);
    expect(result.warnings).toEqual([
      'status.addresses: 100000 entries, more than the 16 the Gateway CRD allows',
    ]);
  });
});

describe('messages (issue 10 item 6)', () => {
  const message = (row: Omit<Row, 'name'>) => {
    const r = run(row);
    return [...r.violations, ...r.warned, ...r.notices][0]!;
  };

  it('the ratchet warning names the problem, not a rule code', () => {
    const old = baseGateway({ spec: [{ value: '10.96.0.10', routability: 'Cluster' }] });
    const edited = structuredClone(old);
    edited.metadata.labels = { team: 'x' };
    const result = validateGateway(update(edited, old), context({ ranges: ranges('10.128.0.0/16') }));
    expect(result.warnings).toEqual([
      'spec.addresses[0]: unchanged, so allowed, although now: Cluster address "10.96.0.10" is outside the service range',
    ]);
    expect(result.warnings.join()).not.toMatch(/ClusterAddressOutsideServiceRange/);
  });

  it('one wording for an unset routability, and the Required form for a missing one', () => {
    const inside = message({ status: [{ value: '10.96.0.42' }], want: [] });
    expect(inside.message).toContain('routability unset (read as External) requires');
    const mismatch = message({
      spec: [{ routability: 'Cluster' }],
      status: [{ value: '203.0.113.1' }],
      want: [],
    });
    expect(mismatch.message).toBe(
      'status.addresses[0].routability: Required value: routability unset (read as External), but no spec address requests routability External (requested: Cluster); an implementation must not substitute a different scope',
    );
    expect(mismatch.type).toBe('FieldValueRequired');
  });

  it('an IPv4-mapped IPv6 value says which IPv4 address it was read as', () => {
    const f = message({ spec: [{ value: '::ffff:10.0.0.5', routability: 'Cluster' }], want: [] });
    expect(f.message).toContain('"::ffff:10.0.0.5": read as IPv4 10.0.0.5:');
    expect(f.warning).toContain('(read as IPv4 10.0.0.5)');
  });

  it('a CIDR given as a value gets a range hint', () => {
    const f = message({ spec: [{ value: '10.96.0.0/12', routability: 'Cluster' }], want: [] });
    expect(f.message).toContain('is a range, not an address');
  });

  it('says 253 characters, not bytes', () => {
    const f = message({ spec: [{ routability: `example.com/${'a'.repeat(250)}` }], want: [] });
    expect(f.message).toBe('spec.addresses[0].routability: Too long: may not be more than 253 characters');
  });

  it('experimental External says what to write instead', () => {
    const f = message({ spec: [{ routability: 'External' }], ctx: EXP, want: [] });
    expect(f.message).toContain('upstream GEP-5093 removed "External": leave routability empty');
  });

  it('warnings are cut at a word boundary and keep their hint whole', () => {
    const text = `status.addresses[0].routability: routability unsupported "${'word '.repeat(30)}"; did you mean "Cluster"?`;
    const clamped = clampWarning(text);
    expect(clamped.length).toBeLessThanOrEqual(120);
    expect(clamped.endsWith('...; did you mean "Cluster"?')).toBe(true);
    expect(clamped).toMatch(/word\.\.\.;/);
  });
});
