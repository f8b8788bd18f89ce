/**
 * The rule inputs (src/inputs/rule-inputs.ts) over scripted sources: the
 * context in force only once the ranges and the revision are both known, one
 * context per ranges snapshot and revision, why it is not ready (the ranges'
 * reason first, then the revision's own), the readiness components, change
 * listeners on both sources and their unsubscribe, and close().
 */
import { describe, expect, it } from 'vitest';
import type { AllocatedIPSource } from '../../src/inputs/allocations/types.js';
import type { RangeSource } from '../../src/inputs/ranges/types.js';
import type { RevisionSource } from '../../src/inputs/revision/types.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import type { GepRevision, ServiceRanges } from '../../src/rules/index.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { ranges } from '../kit/gateways.js';

/** What every scripted source has: a value, a readiness reason, listeners, and whether it was closed. */
function scripted<T>(value: T | undefined, reason: string | undefined) {
  const listeners = new Set<() => void>();
  const state = { value, reason, closed: 0, subscribed: 0, unsubscribed: 0 };
  return {
    state,
    listeners,
    source: {
      current: () => state.value,
      readiness: () => ({
        ready: state.value !== undefined,
        ...(state.reason ? { reason: state.reason } : {}),
      }),
      describe: () => ({ value: state.value ?? null }),
      onChange: (l: () => void) => {
        state.subscribed++;
        listeners.add(l);
        return () => {
          state.unsubscribed++;
          listeners.delete(l);
        };
      },
      close: () => {
        state.closed++;
        return Promise.resolve();
      },
    },
    set(next: T | undefined) {
      state.value = next;
      for (const l of listeners) l();
    },
  };
}

function inputs(opts: {
  ranges?: ServiceRanges | undefined;
  rangesReason?: string;
  revision?: GepRevision | undefined | 'no source';
  revisionReason?: string;
  allocatedIPs?: AllocatedIPSource;
}) {
  const r = scripted<ServiceRanges>(opts.ranges, opts.rangesReason);
  const v = scripted<GepRevision>(
    opts.revision === 'no source' ? undefined : opts.revision,
    opts.revisionReason,
  );
  let sourcesClosed = 0;
  const built = ruleInputs({
    settings: FIXTURE_SETTINGS,
    sources: {
      ranges: r.source as RangeSource,
      allocatedIPs: opts.allocatedIPs,
      close: () => {
        sourcesClosed++;
        return Promise.resolve();
      },
    },
    revision: opts.revision === 'no source' ? undefined : (v.source as RevisionSource),
  });
  return { built, ranges: r, revision: v, sourcesClosed: () => sourcesClosed };
}

const RANGES = ranges('10.96.0.0/16');

describe('current()', () => {
  it('is undefined until both the ranges and the revision are known', () => {
    const t = inputs({ ranges: undefined, revision: undefined });
    expect(t.built.current()).toBeUndefined();
    t.ranges.set(RANGES);
    expect(t.built.current()).toBeUndefined();
    t.ranges.set(undefined);
    t.revision.set('experimental');
    expect(t.built.current()).toBeUndefined();
    t.ranges.set(RANGES);
    expect(t.built.current()).toMatchObject({ revision: 'experimental', ctx: { ranges: RANGES } });
  });

  it('one context per ranges snapshot and revision: the same object until either changes', () => {
    const t = inputs({ ranges: RANGES, revision: 'provisional' });
    const first = t.built.current();
    expect(t.built.current()).toBe(first);
    expect(first?.ctx.revision).toBe('provisional');
    t.revision.set('experimental');
    const second = t.built.current();
    expect(second).not.toBe(first);
    expect(second).toMatchObject({ revision: 'experimental', ctx: { revision: 'experimental' } });
    // Equal ranges in a new snapshot are a new context too (identity, not content).
    const again = ranges('10.96.0.0/16');
    t.ranges.set(again);
    const third = t.built.current();
    expect(third).not.toBe(second);
    expect(third?.ctx.ranges).toBe(again);
    expect(t.built.current()).toBe(third);
  });

  it('without a revision source: --gep-revision read offline (auto is provisional)', () => {
    const t = inputs({ ranges: RANGES, revision: 'no source' });
    expect(t.built.current()?.revision).toBe('provisional');
    expect(t.built.components.gepRevision).toBeUndefined();
  });
});

describe('notReadyReason()', () => {
  it.each([
    {
      what: 'ranges unknown, with their reason',
      ranges: undefined,
      rangesReason: 'ServiceCIDRs not listed yet',
      revisionReason: 'the Gateway CRD is not read yet',
      reason: 'ServiceCIDRs not listed yet',
    },
    {
      what: 'ranges unknown, without a reason',
      ranges: undefined,
      rangesReason: undefined,
      revisionReason: 'the Gateway CRD is not read yet',
      reason: 'service ranges unknown',
    },
    {
      what: "ranges known: the revision's reason, not the ranges'",
      ranges: RANGES,
      rangesReason: 'a stale reason of the ranges',
      revisionReason: 'the Gateway CRD is not read yet',
      reason: 'the Gateway CRD is not read yet',
    },
    {
      what: 'ranges known, a revision without a reason',
      ranges: RANGES,
      rangesReason: 'a stale reason of the ranges',
      revisionReason: undefined,
      reason: 'GEP-5093 revision unknown',
    },
  ])('$what', (t) => {
    const { built } = inputs({ ...t, revision: undefined });
    expect(built.notReadyReason()).toBe(t.reason);
  });
});

describe('components, listeners, close', () => {
  it('lists the ranges, the allocated IPs and the revision for /readyz', () => {
    const t = inputs({ ranges: undefined, revision: undefined, revisionReason: 'no CRD' });
    const { gepRevision, serviceRanges, allocatedIPs } = t.built.components;
    expect(gepRevision?.name).toBe('gep-revision');
    expect(gepRevision?.check?.()).toEqual({ ok: false, reason: 'no CRD' });
    expect(gepRevision?.detail?.key).toBe('gepRevision');
    expect(gepRevision?.detail?.describe()).toEqual({ value: null });
    expect(serviceRanges.name).toBe('service-ranges');
    expect(allocatedIPs.name).toBe('allocated-ips');
    expect(t.built.prefetch).toBeUndefined();
  });

  it('prefetches allocated IPs only with a lookup source', () => {
    const lookups: AllocatedIPSource = {
      lookup: () => Promise.resolve({ holderOf: () => undefined }),
      describe: () => ({}),
      close: () => Promise.resolve(),
    };
    expect(
      inputs({ ranges: RANGES, revision: 'provisional', allocatedIPs: lookups }).built.prefetch,
    ).toBeDefined();
  });

  it('tells a listener of a change of the ranges or of the revision; its unsubscribe leaves both', () => {
    const t = inputs({ ranges: RANGES, revision: 'provisional' });
    let heard = 0;
    const off = t.built.onChange(() => heard++);
    t.ranges.set(ranges('10.97.0.0/16'));
    t.revision.set('experimental');
    expect(heard).toBe(2);
    off();
    expect([t.ranges.state.unsubscribed, t.revision.state.unsubscribed]).toEqual([1, 1]);
    t.ranges.set(RANGES);
    t.revision.set('provisional');
    expect(heard).toBe(2);
  });

  it('a revision source that never changes (no onChange), or none: listening to the ranges alone', () => {
    const t = inputs({ ranges: RANGES, revision: 'provisional' });
    const fixed = { ...t.revision.source, onChange: undefined } as RevisionSource;
    const built = ruleInputs({
      settings: FIXTURE_SETTINGS,
      sources: {
        ranges: t.ranges.source as RangeSource,
        allocatedIPs: undefined,
        close: () => Promise.resolve(),
      },
      revision: fixed,
    });
    let heard = 0;
    const off = built.onChange(() => heard++);
    t.ranges.set(ranges('10.97.0.0/16'));
    expect(heard).toBe(1);
    off();
    expect(t.ranges.state.unsubscribed).toBe(1);
    // Without a revision source the revision is never the reason.
    expect(inputs({ ranges: RANGES, revision: 'no source' }).built.notReadyReason()).toBe(
      'GEP-5093 revision unknown',
    );
  });

  it('close() closes the cluster sources and the revision source, and waits for both', async () => {
    const t = inputs({ ranges: RANGES, revision: 'provisional' });
    await t.built.close();
    expect([t.sourcesClosed(), t.revision.state.closed]).toEqual([1, 1]);
    const offline = inputs({ ranges: RANGES, revision: 'no source' });
    await offline.built.close();
    expect(offline.sourcesClosed()).toBe(1);
  });
});
