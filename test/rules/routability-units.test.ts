/**
 * The pieces of src/rules/routability.ts one at a time, as tables: the syntax
 * rule per revision, how an entry's routability is read, the identities used to
 * match status against spec and to ratchet, holder names, and the scope checks
 * of one address (which finding, with which words). The rule tables of
 * spec-rules and status-rules reach these through whole Gateways; here each
 * branch has a row of its own.
 */
import { describe, expect, it } from 'vitest';
import { FieldPath } from '../../src/rules/field-path.js';
import type { AddressEntry } from '../../src/rules/gateway.js';
import {
  addressIdentity,
  checkAddressScope,
  checkRoutabilitySyntax,
  clusterZone,
  describeHolder,
  entryKey,
  readRoutability,
} from '../../src/rules/routability.js';
import type { RuleContext } from '../../src/rules/types.js';
import { context, ranges } from '../kit/gateways.js';

const FIELD = FieldPath.root('spec', 'addresses').index(0);
const entry = (over: Partial<Omit<AddressEntry, 'field'>>): AddressEntry => ({
  field: FIELD,
  type: 'IPAddress',
  value: undefined,
  routability: undefined,
  ...over,
});
const EXPERIMENTAL = context({ revision: 'experimental' });
const PROVISIONAL = context();

describe('checkRoutabilitySyntax', () => {
  // [value, revision, the message after the field, or undefined when valid]
  const rows: [unknown, 'provisional' | 'experimental', string | undefined][] = [
    ['External', 'provisional', undefined],
    ['Cluster', 'provisional', undefined],
    ['example.com/CorpWan', 'provisional', undefined],
    ['', 'experimental', undefined],
    ['Cluster', 'experimental', undefined],
    ['example.com/CorpWan', 'experimental', undefined],
    // No 63-character cap per label, as upstream's dns1123Subdomain (docs/dev/decisions.md).
    [`${'a'.repeat(64)}.example/x`, 'experimental', undefined],
    ['notk8s.io/scope', 'experimental', undefined],
    [7, 'experimental', 'Invalid value: 7: must be a string'],
    [`example.com/${'x'.repeat(242)}`, 'experimental', 'Too long: may not be more than 253 characters'],
    ['cluster', 'provisional', 'Unsupported value: "cluster": supported values'],
    ['External', 'experimental', 'Unsupported value: "External": supported values'],
    ['corpwan', 'experimental', 'Unsupported value: "corpwan": supported values'],
    ['example.com/', 'experimental', 'Unsupported value: "example.com/": supported values'],
    ['Example.com/x', 'experimental', 'Unsupported value: "Example.com/x": supported values'],
    ['a..b/x', 'experimental', 'Unsupported value: "a..b/x": supported values'],
    [
      'k8s.io/scope',
      'experimental',
      'Invalid value: "k8s.io/scope": the prefix k8s.io and its subdomains are reserved',
    ],
    ['foo.k8s.io/scope', 'experimental', 'Invalid value: "foo.k8s.io/scope": the prefix k8s.io'],
  ];
  it.each(rows.map((r) => [String(r[0]).slice(0, 30), r[1], r] as const))('%s (%s)', (_v, _r, row) => {
    const [value, revision, want] = row;
    const finding = checkRoutabilitySyntax(value, FIELD.child('routability'), revision);
    if (want === undefined) expect(finding).toBeUndefined();
    else {
      expect(finding?.code).toBe('RoutabilityUnsupported');
      expect(finding?.message).toContain(`spec.addresses[0].routability: ${want}`);
    }
  });

  it('takes the field as a path or as a function that builds it', () => {
    const lazy = checkRoutabilitySyntax('cluster', () => FIELD.child('routability'));
    expect(lazy?.field.toString()).toBe('spec.addresses[0].routability');
    expect(checkRoutabilitySyntax('cluster', FIELD.child('routability'))?.message).toBe(lazy?.message);
    // Without a revision: the provisional rule and wording.
    expect(lazy?.message).toContain('supported values: "External", "Cluster", or a domain-prefixed value');
  });
});

describe('readRoutability', () => {
  it.each([
    ['unset in provisional status', undefined, PROVISIONAL, true, { kind: 'External', unset: true }],
    ['unset in provisional spec', undefined, PROVISIONAL, false, { kind: 'none' }],
    ['unset in experimental status', undefined, EXPERIMENTAL, true, { kind: 'none' }],
    ['"" in experimental', '', EXPERIMENTAL, false, { kind: 'none' }],
    ['External in provisional', 'External', PROVISIONAL, false, { kind: 'External', unset: false }],
    ['Cluster', 'Cluster', EXPERIMENTAL, true, { kind: 'Cluster' }],
    ['a prefixed value', 'example.com/x', EXPERIMENTAL, false, { kind: 'prefixed', value: 'example.com/x' }],
  ] as const)('%s', (_name, routability, ctx, status, want) => {
    expect(readRoutability(entry({ routability }), ctx, status)).toEqual(want);
  });

  it('External in experimental is a finding', () => {
    const read = readRoutability(entry({ routability: 'External' }), EXPERIMENTAL, false);
    expect(read.kind).toBe('invalid');
  });
});

describe('identities', () => {
  it('clusterZone lower-cases and drops one trailing dot', () => {
    expect(clusterZone('Cluster.Local.')).toBe('cluster.local');
    expect(clusterZone('cluster.local')).toBe('cluster.local');
  });

  it.each([
    ['an IP, canonical', { type: 'IPAddress', value: 'FD00::0A' }, 'IPAddress/fd00::a'],
    ['an invalid IP', { type: 'IPAddress', value: '10.0.0.300' }, undefined],
    [
      'a hostname, lower-cased, without its trailing dot',
      { type: 'Hostname', value: 'GW.Example.com.' },
      'Hostname/gw.example.com',
    ],
    ['another type, as written', { type: 'example.com/Named', value: 'GW.x' }, 'example.com/Named/GW.x'],
    ['a type that is not a string', { type: 7, value: 'v' }, '7/v'],
    ['a type that is an object, as JSON', { type: { a: 1 }, value: 'v' }, '{"a":1}/v'],
    ['a value that is not a string', { type: 'IPAddress', value: 7 }, undefined],
  ] as const)('addressIdentity: %s', (_name, e, want) => {
    expect(addressIdentity(entry(e))).toBe(want);
  });

  it('entryKey: IPs compare canonical, hostnames and other values as written', () => {
    const key = (e: Partial<AddressEntry>, status = false) => entryKey(entry(e), PROVISIONAL, status);
    expect(key({ value: 'FD00::A' })).toBe(key({ value: 'fd00::a' }));
    expect(key({ type: 'Hostname', value: 'FD00::A' })).not.toBe(key({ type: 'Hostname', value: 'fd00::a' }));
    expect(key({ value: '10.0.0.300' })).not.toBe(key({ value: '10.0.0.3' }));
    // Not a string: compared as JSON, so 5 and "5" differ and an absent value is a value too.
    expect(key({ value: 5 })).not.toBe(key({ value: '5' }));
    expect(key({ value: 5 })).not.toBe(key({ value: 6 }));
    expect(key({ value: undefined })).toBe(key({ value: undefined }));
    expect(key({ type: 'Hostname', value: undefined })).not.toBe(key({ value: undefined }));
    // Provisional status reads unset as External; spec keeps it unset.
    expect(key({ value: '10.0.0.1' }, true)).toBe(key({ value: '10.0.0.1', routability: 'External' }, true));
    expect(key({ value: '10.0.0.1' }, false)).not.toBe(key({ value: '10.0.0.1', routability: 'External' }));
  });

  it('describeHolder: resource.group/namespace/name, each part only when present', () => {
    expect(
      describeHolder({ group: '', resource: 'services', namespace: 'kube-system', name: 'kube-dns' }),
    ).toBe('services/kube-system/kube-dns');
    expect(
      describeHolder({
        group: 'gateway.networking.k8s.io',
        resource: 'gateways',
        namespace: 'apps',
        name: 'gw',
      }),
    ).toBe('gateways.gateway.networking.k8s.io/apps/gw');
    expect(describeHolder({ group: 'example.com', resource: 'pools', namespace: '', name: 'p' })).toBe(
      'pools.example.com/p',
    );
  });
});

describe('checkAddressScope', () => {
  const TERMINATING = ranges('10.96.0.0/16', { cidr: '10.100.0.0/16', terminating: true });
  const scope = (
    e: Partial<AddressEntry>,
    kind: 'External' | 'Cluster',
    ctx: RuleContext,
    options: { requesting: boolean; gateway?: { namespace: string; name: string } } = { requesting: true },
    unset?: boolean,
  ) =>
    checkAddressScope(entry(e), { kind, ...(unset === undefined ? {} : { unset }) }, ctx, options).map(
      (f) => f.message,
    );

  it('a value that is not an IP where one belongs', () => {
    expect(scope({ value: 7 }, 'Cluster', PROVISIONAL)).toEqual([
      'spec.addresses[0].value: Invalid value: 7: must be a valid IPv4 or IPv6 address (no leading zeros, no zone) for routability Cluster',
    ]);
    expect(scope({ value: '10.96.0.0/24' }, 'External', PROVISIONAL, undefined, true)).toEqual([
      'spec.addresses[0].value: Invalid value: "10.96.0.0/24": is a range, not an address: give one address of it (routability unset (read as External) checks a single IP)',
    ]);
  });

  it('an invalid address with a slash is a range only when it parses as one', () => {
    expect(scope({ value: '10.0.0.300/24' }, 'Cluster', PROVISIONAL)[0]).toContain(
      'must be a valid IPv4 or IPv6 address',
    );
    expect(scope({ value: '10.0.0.0/24' }, 'Cluster', PROVISIONAL)[0]).toContain(
      'is a range, not an address',
    );
  });

  it('no value, or a value of another type, is not judged as an IP', () => {
    expect(scope({ value: undefined }, 'Cluster', PROVISIONAL)).toEqual([]);
    expect(scope({ type: 'Hostname', value: 7 }, 'External', PROVISIONAL)).toEqual([]);
    expect(scope({ type: 'example.com/Named', value: '10.0.0.5' }, 'Cluster', PROVISIONAL)).toEqual([]);
    expect(
      scope({ type: 'example.com/Named', value: 'gw.apps.svc.cluster.local' }, 'External', PROVISIONAL),
    ).toEqual([]);
  });

  it('a hostname: only External in the cluster domain is a finding', () => {
    expect(scope({ type: 'Hostname', value: 'gw.apps.svc.cluster.local' }, 'Cluster', PROVISIONAL)).toEqual(
      [],
    );
    expect(scope({ type: 'Hostname', value: 'gw.example.com' }, 'External', PROVISIONAL)).toEqual([]);
    expect(scope({ type: 'Hostname', value: 'gw.apps.svc.Cluster.Local.' }, 'External', PROVISIONAL)).toEqual(
      [
        'spec.addresses[0].value: Invalid value: "gw.apps.svc.Cluster.Local.": routability External cannot use a name in the cluster DNS domain cluster.local, which resolves only inside the cluster; use routability Cluster',
      ],
    );
    // An IP literal as a hostname is judged by the IP rules.
    expect(scope({ type: 'Hostname', value: '10.96.0.5' }, 'External', PROVISIONAL)).toHaveLength(1);
  });

  it('External inside a range, explicit or unset', () => {
    expect(scope({ value: '10.96.0.5' }, 'External', PROVISIONAL)).toEqual([
      'spec.addresses[0].value: Invalid value: "10.96.0.5": routability External requires an address outside the service range (10.96.0.0/12); use routability Cluster for a ClusterIP',
    ]);
    expect(scope({ value: '10.96.0.5' }, 'External', PROVISIONAL, undefined, false)[0]).toContain(
      'routability External requires',
    );
    expect(scope({ value: '10.96.0.5' }, 'External', PROVISIONAL, undefined, true)[0]).toContain(
      'routability unset (read as External) requires',
    );
  });

  it('Cluster outside the usable ranges: a terminating range is not usable for a new request', () => {
    const ctx = context({ ranges: TERMINATING });
    expect(scope({ value: '10.100.0.5' }, 'Cluster', ctx)).toEqual([
      'spec.addresses[0].value: Invalid value: "10.100.0.5": routability Cluster requires an address inside the service range (10.96.0.0/16); 10.100.0.0/16 is being deleted and takes no new addresses',
    ]);
    // In status (not a new request) the terminating range still counts.
    expect(scope({ value: '10.100.0.5' }, 'Cluster', ctx, { requesting: false })).toEqual([]);
    expect(scope({ value: '10.200.0.5' }, 'Cluster', ctx, { requesting: false })).toEqual([
      'spec.addresses[0].value: Invalid value: "10.200.0.5": routability Cluster requires an address inside the service range (10.96.0.0/16, 10.100.0.0/16)',
    ]);
  });

  it('Cluster: every terminating range holding the address is named', () => {
    const ctx = context({
      ranges: ranges(
        '10.96.0.0/16',
        { cidr: '10.100.0.0/16', terminating: true },
        { cidr: '10.100.0.0/24', terminating: true },
      ),
    });
    expect(scope({ value: '10.100.0.5' }, 'Cluster', ctx)[0]).toContain(
      '; 10.100.0.0/16, 10.100.0.0/24 is being deleted and takes no new addresses',
    );
  });

  it('Cluster: a reserved or allocated address ends the checks, an unchecked one does not', () => {
    // 10.0.0.0/7 is not global as a whole, so its public half gets the global warning when checks go on.
    const global =
      'a Cluster address SHOULD NOT be globally routable unless the service range itself is (GEP-5093)';
    const inPublicHalf = (allocatedIPs: RuleContext['allocatedIPs'], value = '11.0.0.5') =>
      scope({ value }, 'Cluster', context({ ranges: ranges('10.0.0.0/7'), allocatedIPs }));
    const other = { group: '', resource: 'services', namespace: 'a', name: 'b' };
    expect(inPublicHalf(undefined, '11.255.255.255')).toEqual([
      'spec.addresses[0].value: Invalid value: "11.255.255.255": is the broadcast address of service range 10.0.0.0/7, which is never allocated; choose another address in the range',
    ]);
    expect(inPublicHalf({ holderOf: () => other })).toEqual([
      'spec.addresses[0].value: Invalid value: "11.0.0.5": already allocated to services/a/b',
    ]);
    const unchecked = inPublicHalf({ holderOf: () => undefined, uncheckedReason: () => 'timeout' });
    expect(unchecked).toHaveLength(2);
    expect(unchecked[1]).toContain(global);
  });

  it('Cluster: a family whose only range is terminating is missing for a request, not in status', () => {
    const ctx = context({ ranges: ranges('10.96.0.0/12', { cidr: 'fd00::/112', terminating: true }) });
    expect(scope({ value: 'fd01::5' }, 'Cluster', ctx)[0]).toContain(
      ', and the cluster has no IPv6 service range',
    );
    expect(scope({ value: 'fd01::5' }, 'Cluster', ctx, { requesting: false })[0]).not.toContain(
      'has no IPv6',
    );
    expect(scope({ value: '10.0.0.5' }, 'Cluster', ctx)[0]).not.toContain('has no');
  });

  it('Cluster: the network address of a range is reserved and ends the checks', () => {
    const ctx = context({
      ranges: ranges('10.96.0.0/16'),
      allocatedIPs: { holderOf: () => ({ group: '', resource: 'services', namespace: 'a', name: 'b' }) },
    });
    expect(scope({ value: '10.96.0.0' }, 'Cluster', ctx)).toEqual([
      'spec.addresses[0].value: Invalid value: "10.96.0.0": is the network address of service range 10.96.0.0/16, which is never allocated; choose another address in the range',
    ]);
  });

  it('Cluster: an IP held by another object ends the checks; one held by this Gateway is fine', () => {
    const holder = {
      group: 'gateway.networking.k8s.io',
      resource: 'gateways',
      namespace: 'apps',
      name: 'gw',
    };
    const held = (h: typeof holder, gateway?: { namespace: string; name: string }) =>
      scope(
        { value: '10.96.0.5' },
        'Cluster',
        context({ ranges: ranges('10.96.0.0/16'), allocatedIPs: { holderOf: () => h } }),
        { requesting: true, ...(gateway ? { gateway } : {}) },
      );
    const self = { namespace: 'apps', name: 'gw' };
    expect(held(holder, self)).toEqual([]);
    const allocated = (name: string) => [
      `spec.addresses[0].value: Invalid value: "10.96.0.5": already allocated to ${name}`,
    ];
    expect(held(holder)).toEqual(allocated('gateways.gateway.networking.k8s.io/apps/gw'));
    expect(held({ ...holder, group: 'example.com' }, self)).toEqual(
      allocated('gateways.example.com/apps/gw'),
    );
    expect(held({ ...holder, resource: 'routes' }, self)).toEqual(
      allocated('routes.gateway.networking.k8s.io/apps/gw'),
    );
    expect(held({ ...holder, namespace: 'other' }, self)).toEqual(
      allocated('gateways.gateway.networking.k8s.io/other/gw'),
    );
    expect(held({ ...holder, name: 'other' }, self)).toEqual(
      allocated('gateways.gateway.networking.k8s.io/apps/other'),
    );
  });

  it('Cluster: an unchecked allocation warns and the other checks go on', () => {
    const ctx = context({
      ranges: ranges('10.96.0.0/16'),
      allocatedIPs: { holderOf: () => undefined, uncheckedReason: () => 'lookup failed' },
    });
    expect(scope({ value: '10.96.0.5' }, 'Cluster', ctx)).toEqual([
      'spec.addresses[0].value: Invalid value: "10.96.0.5": allowed without checking whether another object holds it (lookup failed)',
    ]);
  });

  it('Cluster: a globally routable address warns unless a usable range holding it is global itself', () => {
    const warning =
      'spec.addresses[0].value: Invalid value: "11.96.0.5": a Cluster address SHOULD NOT be globally routable unless the service range itself is (GEP-5093)';
    // 10.0.0.0/7 holds private 10/8 and public 11/8: not global as a whole.
    expect(scope({ value: '11.96.0.5' }, 'Cluster', context({ ranges: ranges('10.0.0.0/7') }))).toEqual([
      warning,
    ]);
    expect(scope({ value: '11.96.0.5' }, 'Cluster', context({ ranges: ranges('11.96.0.0/16') }))).toEqual([]);
    expect(
      scope({ value: '11.96.0.5' }, 'Cluster', context({ ranges: ranges('10.0.0.0/7', '11.96.0.0/16') })),
    ).toEqual([]);
  });
});
