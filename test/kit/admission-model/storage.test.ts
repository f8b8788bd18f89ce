/** JSON patches, pruning and the registry strategy, as the model applies them. */
import { describe, expect, it } from 'vitest';
import { createOf, gateway, statusOf } from './fixtures.js';
import { applyPatch } from './json-patch.js';
import { prune } from './pruning.js';
import { prepareForStorage } from './strategy.js';

describe('JSON patch (mutating/dispatcher.go: RFC 6902 via evanphx/json-patch)', () => {
  const doc = { a: { b: [1, 2] }, 'x/y': 1 };
  const rows: [string, object[], unknown][] = [
    ['add to an object', [{ op: 'add', path: '/a/c', value: 3 }], { a: { b: [1, 2], c: 3 }, 'x/y': 1 }],
    ['add appends with -', [{ op: 'add', path: '/a/b/-', value: 3 }], { a: { b: [1, 2, 3] }, 'x/y': 1 }],
    ['add inserts at an index', [{ op: 'add', path: '/a/b/0', value: 0 }], { a: { b: [0, 1, 2] }, 'x/y': 1 }],
    ['remove', [{ op: 'remove', path: '/a/b/1' }], { a: { b: [1] }, 'x/y': 1 }],
    [
      'replace with an escaped key',
      [{ op: 'replace', path: '/x~1y', value: 2 }],
      { a: { b: [1, 2] }, 'x/y': 2 },
    ],
    [
      'test then add',
      [
        { op: 'test', path: '/a/b/0', value: 1 },
        { op: 'add', path: '/n', value: 1 },
      ],
      { a: { b: [1, 2] }, 'x/y': 1, n: 1 },
    ],
    ['move', [{ op: 'move', from: '/a/b', path: '/b' }], { a: {}, 'x/y': 1, b: [1, 2] }],
  ];
  it.each(rows)('%s', (_, patch, expected) => {
    expect(applyPatch(doc, patch as never)).toEqual(expected);
  });
  const bad: [string, object[]][] = [
    ['a failed test', [{ op: 'test', path: '/a/b/0', value: 9 }]],
    ['a missing parent', [{ op: 'add', path: '/q/r', value: 1 }]],
    ['removing what is not there', [{ op: 'remove', path: '/zz' }]],
    ['an index out of bounds', [{ op: 'add', path: '/a/b/5', value: 1 }]],
    ['an unknown op', [{ op: 'merge', path: '/a', value: 1 }]],
  ];
  it.each(bad)('%s cannot apply', (_, patch) => {
    expect(() => applyPatch(doc, patch as never)).toThrow();
  });
  it('never changes its input', () => {
    applyPatch(doc, [{ op: 'add', path: '/a/c', value: 3 }]);
    expect(doc).toEqual({ a: { b: [1, 2] }, 'x/y': 1 });
  });
});

describe('pruning (apiextensions pruning/algorithm.go)', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          addresses: { type: 'array', items: { type: 'object', properties: { value: { type: 'string' } } } },
        },
      },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
    },
  };
  it('drops fields the schema lacks, in array items too, and keeps apiVersion, kind and metadata', () => {
    const o = {
      apiVersion: 'v',
      kind: 'K',
      metadata: { name: 'n', extra: 1 },
      spec: { addresses: [{ value: '1.2.3.4', routability: 'Cluster' }], other: 1 },
      unknown: true,
    };
    expect(prune(o, schema)).toEqual({
      apiVersion: 'v',
      kind: 'K',
      metadata: { name: 'n', extra: 1 },
      spec: { addresses: [{ value: '1.2.3.4' }] },
    });
  });
  it('keeps what x-kubernetes-preserve-unknown-fields keeps, and additionalProperties', () => {
    const o = { status: { anything: { deep: 1 } }, labels: { a: 'b' } };
    expect(prune(o, schema)).toEqual(o);
  });
  it('prunes nothing without a schema (no CRD in the model)', () => {
    expect(prune({ x: 1 }, undefined)).toEqual({ x: 1 });
  });
});

describe('registry strategy (registry/generic/registry/store.go, customresource strategy.go, status_strategy.go)', () => {
  const stored = gateway({ addresses: [{ value: '10.0.0.1' }], status: { addresses: [{ value: 'old' }] } });
  const sent = gateway({ addresses: [{ value: '10.9.9.9' }], status: { addresses: [{ value: 'new' }] } });
  it('a CREATE drops status', () => {
    expect(prepareForStorage(createOf(sent), sent)['status']).toBeUndefined();
  });
  it('an UPDATE of the main resource keeps the stored status', () => {
    const w = { ...createOf(sent), operation: 'UPDATE' as const, oldObject: stored };
    const out = prepareForStorage(w, sent);
    expect(out['status']).toEqual(stored['status']);
    expect(out['spec']).toEqual(sent['spec']);
  });
  it('an UPDATE of status keeps the stored spec and takes the new status', () => {
    const out = prepareForStorage(statusOf(sent, stored), sent);
    expect(out['spec']).toEqual(stored['spec']);
    expect(out['status']).toEqual(sent['status']);
  });
});
