import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { startAuditLoop, type AuditLoop } from '../../src/audit/loop.js';
import { changeListeners } from '../../src/inputs/ranges/changes.js';
import { auditMetrics } from '../../src/audit/metrics.js';
import { judgeWithContext } from '../../src/audit/judge.js';
import type { GatewayPage } from '../../src/audit/gateway-pages.js';
import type { RuleContext } from '../../src/rules/index.js';
import { context as baseContext, ranges } from '../kit/gateways.js';
import { capturingLogger } from '../kit/helpers.js';
import { gateway } from '../kit/fake-apiserver.js';
import { eventually, sleep } from '../kit/eventually.js';

/** The suite's base context over the given service ranges, status findings as warnings. */
function context(cidrs: readonly string[]): RuleContext {
  return baseContext({ ranges: ranges(...cidrs), statusPolicy: 'warn' });
}

async function metric(
  registry: Registry,
  name: string,
): Promise<{ labels: Record<string, string>; value: number }[]> {
  const json = await registry.getMetricsAsJSON();
  const m = json.find((x) => x.name === name);
  return (m?.values ?? []).map((v) => ({ labels: v.labels as Record<string, string>, value: v.value }));
}

let loop: AuditLoop | undefined;
afterEach(async () => {
  await loop?.stop();
  loop = undefined;
});

describe('startAuditLoop', () => {
  it('audits at start, again when the rule inputs change, and logs only Gateways whose findings changed', async () => {
    const stored = [
      gateway('apps', 'cluster-ip', {
        spec: [{ type: 'IPAddress', value: '10.100.0.5', routability: 'Cluster' }],
      }),
      gateway('apps', 'public', {
        spec: [{ type: 'IPAddress', value: '203.0.113.9', routability: 'External' }],
      }),
    ];
    let cidrs = ['10.96.0.0/12'];
    const inputs = changeListeners();
    let listed = 0;
    const registry = new Registry();
    const { logger, lines } = capturingLogger();
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      onInputsChange: inputs.add,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        listed++;
        yield { items: stored, page: 1, restarted: false };
      },
      judge: () => judgeWithContext(context(cidrs)),
      metrics: auditMetrics(registry),
      logger,
    });
    await eventually(() => loop!.lastResult() !== undefined, 'the first pass');
    expect(loop.lastResult()!.violations).toBe(0);
    expect(lines.filter((l) => l.msg === 'audit: findings changed')).toHaveLength(0);

    // The range shrinks: the Cluster address now lies outside every ServiceCIDR.
    cidrs = ['10.96.0.0/16'];
    inputs.emit();
    await eventually(() => (loop!.lastResult()?.violations ?? 0) === 1, 'a pass after the range change');
    const changed = lines.filter((l) => l.msg === 'audit: findings changed');
    expect(changed.map((l) => l['gateway'])).toEqual(['apps/cluster-ip']);
    expect(await metric(registry, 'routability_webhook_audit_findings')).toEqual([
      { labels: { code: 'ClusterAddressOutsideServiceRange', scope: 'spec' }, value: 1 },
    ]);
    expect((await metric(registry, 'routability_webhook_audit_violating_gateways'))[0]!.value).toBe(1);
    expect((await metric(registry, 'routability_webhook_audit_gateways'))[0]!.value).toBe(2);

    // It grows back: the finding clears, and is logged once as cleared.
    cidrs = ['10.96.0.0/12'];
    inputs.emit();
    await eventually(() => lines.some((l) => l.msg === 'audit: findings cleared'), 'the cleared line');
    expect(await metric(registry, 'routability_webhook_audit_findings')).toEqual([]);
    expect(listed).toBe(3);
  });

  it('lists only the Gateways the previous pass flagged; one that is gone is not logged as cleared', async () => {
    const bad = (name: string) =>
      gateway('apps', name, { spec: [{ type: 'IPAddress', value: '10.200.0.5', routability: 'Cluster' }] });
    let stored = [bad('stays'), bad('goes'), gateway('apps', 'clean', {})];
    let cidrs = ['10.96.0.0/16'];
    const inputs = changeListeners();
    const { logger, lines } = capturingLogger();
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      onInputsChange: inputs.add,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        yield { items: stored, page: 1, restarted: false };
      },
      judge: () => judgeWithContext(context(cidrs)),
      metrics: auditMetrics(new Registry()),
      logger,
    });
    await eventually(() => loop!.lastResult() !== undefined, 'the first pass');
    // Nothing was flagged before the first pass: no Gateway needs listing.
    expect(loop.lastResult()!.audited).toEqual([]);
    expect(loop.lastResult()!.gateways).toBe(3);

    // Both flagged ones clear: one still stored, one deleted.
    const first = loop.lastResult();
    cidrs = ['10.0.0.0/8'];
    stored = [gateway('apps', 'stays', {}), gateway('apps', 'clean', {})];
    inputs.emit();
    await eventually(() => loop!.lastResult() !== first, 'the second pass');
    expect(loop.lastResult()!.audited).toEqual(['apps/stays']);
    const cleared = lines.filter((l) => l.msg === 'audit: findings cleared').map((l) => l['gateway']);
    expect(cleared).toEqual(['apps/stays']);
  });

  it('skips while the rule inputs are unknown, and counts failed passes without dropping the last results', async () => {
    const registry = new Registry();
    const { logger, lines } = capturingLogger();
    let ready = false;
    let fail = false;
    const inputs = changeListeners();
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      onInputsChange: inputs.add,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        if (fail) throw new Error('listing Gateways: HTTP 403');
        yield { items: [gateway('a', 'g', {})], page: 1, restarted: false };
      },
      judge: () => (ready ? judgeWithContext(context(['10.96.0.0/12'])) : undefined),
      metrics: auditMetrics(registry),
      logger,
    });
    await eventually(() => lines.some((l) => l.msg.startsWith('audit: skipped')), 'the skipped pass');
    expect(loop.lastResult()).toBeUndefined();
    ready = true;
    inputs.emit();
    await eventually(() => loop!.lastResult() !== undefined, 'a pass once ready');
    fail = true;
    inputs.emit();
    await eventually(() => lines.some((l) => l.msg.startsWith('audit pass failed')), 'the failed pass');
    const runs = await metric(registry, 'routability_webhook_audit_runs_total');
    expect(runs.find((r) => r.labels['result'] === 'error')?.value).toBe(1);
    expect(runs.find((r) => r.labels['result'] === 'success')?.value).toBe(1);
    expect(loop.lastResult()!.gateways).toBe(1);
    expect(loop.describe()['lastError']).toContain('HTTP 403');
  });

  it('never runs two passes at once: triggers during a pass queue exactly one more', async () => {
    const registry = new Registry();
    const { logger } = capturingLogger();
    let inFlight = 0;
    let most = 0;
    let passes = 0;
    const gates: (() => void)[] = [];
    const release = () => gates.shift()?.();
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        passes++;
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          // Each pass holds its listing open until the test lets it go.
          await new Promise<void>((r) => gates.push(r));
          yield { items: [gateway('a', 'g', {})], page: 1, restarted: false };
        } finally {
          inFlight--;
        }
      },
      judge: () => judgeWithContext(context(['10.96.0.0/12'])),
      metrics: auditMetrics(registry),
      logger,
    });
    try {
      await eventually(() => passes === 1, 'the first pass');
      // Triggers while it runs, spaced wider than the debounce.
      for (const reason of ['one', 'two', 'three']) {
        loop.trigger(reason);
        await sleep(30);
      }
      expect([passes, most]).toEqual([1, 1]);
      release();
      await eventually(() => passes === 2, 'the queued pass');
      await sleep(100);
      expect([passes, most]).toEqual([2, 1]);
      release();
      await eventually(() => loop!.lastResult() !== undefined && inFlight === 0, 'the queued pass to end');
      // Nothing more was queued: the three triggers made one pass, not three.
      await sleep(100);
      expect([passes, most]).toEqual([2, 1]);
    } finally {
      // Passes still held (only when the test failed) must end for stop() to return.
      while (gates.length > 0) release();
    }
  });
});

describe('startAuditLoop: what a pass reports, leadership, stop', () => {
  const outside = (name: string) =>
    gateway('apps', name, { spec: [{ type: 'IPAddress', value: '10.200.0.5', routability: 'Cluster' }] });

  it('logs each pass with its reason, counts and duration; describes the loop; runs again at the interval', async () => {
    const registry = new Registry();
    const { logger, lines } = capturingLogger();
    loop = startAuditLoop({
      intervalMs: 200,
      debounceMs: 5,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        yield { items: [outside('a'), gateway('apps', 'b', {})], page: 1, restarted: false };
      },
      judge: () => judgeWithContext(context(['10.96.0.0/12'])),
      metrics: auditMetrics(registry),
      logger,
    });
    const done = () => lines.filter((l) => l.msg === 'audit pass done');
    await eventually(() => done().length >= 2, 'a pass at the interval');
    expect(done()[0]).toMatchObject({ reason: 'start', gateways: 2, violations: 1, warnings: 0 });
    expect(done()[0]!['durationMs']).toBeGreaterThanOrEqual(0);
    expect(done()[0]!['durationMs']).toBeLessThan(60_000);
    expect(done()[1]).toMatchObject({ reason: 'interval' });
    expect(loop.describe()).toEqual({
      intervalSeconds: 0.2,
      running: false,
      gateways: 2,
      violations: 1,
      warnings: 0,
    });
    // A trigger's reason is the next pass's, not the interval's.
    loop.trigger('asked for');
    await eventually(() => done().some((l) => l['reason'] === 'asked for'), 'the triggered pass');
    // The findings changed once, at the first pass, with what they are.
    expect(lines.filter((l) => l.msg === 'audit: findings changed')).toEqual([
      expect.objectContaining({
        gateway: 'apps/a',
        findings: [
          {
            code: 'ClusterAddressOutsideServiceRange',
            field: 'spec.addresses[0].value',
            severity: 'violation',
          },
        ],
      }),
    ]);
    const duration = (await metric(registry, 'routability_webhook_audit_duration_seconds'))[0]!.value;
    expect(duration).toBeGreaterThanOrEqual(0);
    expect(duration).toBeLessThan(60);
    const lastRun = (await metric(registry, 'routability_webhook_audit_last_run_timestamp_seconds'))[0]!
      .value;
    expect(Math.abs(lastRun - Date.now() / 1000)).toBeLessThan(60);
    const runs = await metric(registry, 'routability_webhook_audit_runs_total');
    expect(runs.find((r) => r.labels['result'] === 'success')!.value).toBeGreaterThanOrEqual(3);
  });

  it('describes a running pass as running, and a failed one by its error until a pass succeeds', async () => {
    const { logger, lines } = capturingLogger();
    const inputs = changeListeners();
    let fail = true;
    const gates: (() => void)[] = [];
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      onInputsChange: inputs.add,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        await new Promise<void>((r) => gates.push(r));
        if (fail) throw new Error('listing Gateways: HTTP 500');
        yield { items: [gateway('apps', 'g', {})], page: 1, restarted: false };
      },
      judge: () => judgeWithContext(context(['10.96.0.0/12'])),
      metrics: auditMetrics(new Registry()),
      logger,
    });
    await eventually(() => gates.length === 1, 'the first pass');
    expect(loop.describe()).toEqual({ intervalSeconds: 3_600, running: true });
    gates.shift()!();
    await eventually(() => loop!.describe()['running'] === false, 'the failed pass');
    expect(loop.describe()).toEqual({
      intervalSeconds: 3_600,
      running: false,
      lastError: 'listing Gateways: HTTP 500',
    });
    expect(
      lines.find((l) => l.msg === 'audit pass failed; the last results stay in the metrics'),
    ).toMatchObject({
      reason: 'start',
      err: 'listing Gateways: HTTP 500',
    });
    fail = false;
    inputs.emit();
    await eventually(() => gates.length === 1, 'the next pass');
    gates.shift()!();
    await eventually(() => loop!.lastResult() !== undefined, 'a successful pass');
    expect(loop.describe()).toEqual({
      intervalSeconds: 3_600,
      running: false,
      gateways: 1,
      violations: 0,
      warnings: 0,
    });
    expect(lines.find((l) => l.msg === 'audit pass done')).toMatchObject({ reason: 'rule inputs changed' });
  });

  it('a replica that stops leading clears its gauges and results, and logs the findings again when it leads again', async () => {
    const registry = new Registry();
    const { logger, lines } = capturingLogger();
    const inputs = changeListeners();
    let leading = true;
    let passes = 0;
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      onInputsChange: inputs.add,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        passes++;
        yield { items: [outside('a')], page: 1, restarted: false };
      },
      judge: () => judgeWithContext(context(['10.96.0.0/12'])),
      leading: () => leading,
      metrics: auditMetrics(registry),
      logger,
    });
    await eventually(() => loop!.lastResult() !== undefined, 'the first pass');
    expect((await metric(registry, 'routability_webhook_audit_findings')).length).toBe(1);
    leading = false;
    inputs.emit();
    await eventually(() => loop!.lastResult() === undefined, 'the results dropped');
    expect(passes).toBe(1);
    expect(await metric(registry, 'routability_webhook_audit_findings')).toEqual([]);
    expect((await metric(registry, 'routability_webhook_audit_gateways'))[0]!.value).toBe(0);
    expect((await metric(registry, 'routability_webhook_audit_violating_gateways'))[0]!.value).toBe(0);
    expect(loop.describe()).toEqual({ intervalSeconds: 3_600, running: false });
    leading = true;
    inputs.emit();
    await eventually(() => loop!.lastResult() !== undefined, 'a pass as leader again');
    // The same findings as before, logged again: another replica may have logged changes meanwhile.
    expect(lines.filter((l) => l.msg === 'audit: findings changed')).toHaveLength(2);
  });

  it('logs a cleared Gateway only while it still exists; a deleted one is not "cleared"', async () => {
    const { logger, lines } = capturingLogger();
    const inputs = changeListeners();
    let stored = [outside('fixed'), outside('deleted')];
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      onInputsChange: inputs.add,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        yield { items: stored, page: 1, restarted: false };
      },
      judge: () => judgeWithContext(context(['10.96.0.0/12'])),
      metrics: auditMetrics(new Registry()),
      logger,
    });
    await eventually(() => loop!.lastResult()?.violations === 2, 'the first pass');
    stored = [gateway('apps', 'fixed', {})];
    inputs.emit();
    await eventually(() => loop!.lastResult()?.violations === 0, 'the second pass');
    expect(lines.filter((l) => l.msg === 'audit: findings cleared').map((l) => l['gateway'])).toEqual([
      'apps/fixed',
    ]);
  });

  it('after stop: no pass, its listener unsubscribed, a trigger ignored', async () => {
    const { logger } = capturingLogger();
    const inputs = changeListeners();
    let subscribed = 0;
    let passes = 0;
    loop = startAuditLoop({
      intervalMs: 50,
      debounceMs: 5,
      onInputsChange: (listener) => {
        subscribed++;
        const off = inputs.add(listener);
        return () => {
          subscribed--;
          off();
        };
      },
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        passes++;
        yield { items: [], page: 1, restarted: false };
      },
      judge: () => judgeWithContext(context(['10.96.0.0/12'])),
      metrics: auditMetrics(new Registry()),
      logger,
    });
    await eventually(() => passes >= 1, 'the first pass');
    await loop.stop();
    expect(subscribed).toBe(0);
    const after = passes;
    loop.trigger('too late');
    inputs.emit();
    await sleep(200);
    expect(passes).toBe(after);
  });
});

describe('auditMetrics', () => {
  it('registers each series by name, type and help text, the findings and runs with their labels', async () => {
    const registry = new Registry();
    auditMetrics(registry);
    const json = await registry.getMetricsAsJSON();
    expect(json.map((m) => [m.name, m.type, m.help])).toEqual([
      [
        'routability_webhook_audit_findings',
        'gauge',
        'Findings of the last audit pass over the stored Gateways, by rule code and scope (spec or status).',
      ],
      [
        'routability_webhook_audit_violating_gateways',
        'gauge',
        'Gateways whose stored addresses the last audit pass found in violation (a write of them would be denied under enforce).',
      ],
      ['routability_webhook_audit_gateways', 'gauge', 'Gateways judged by the last audit pass.'],
      [
        'routability_webhook_audit_last_run_timestamp_seconds',
        'gauge',
        'Unix time at which the last successful audit pass finished.',
      ],
      [
        'routability_webhook_audit_duration_seconds',
        'gauge',
        'Wall-clock duration of the last successful audit pass.',
      ],
      [
        'routability_webhook_audit_leader',
        'gauge',
        'Whether this replica holds the audit lease and runs the audit (1) or not (0).',
      ],
      ['routability_webhook_audit_runs_total', 'counter', 'Audit passes, by result (success, error).'],
    ]);
    expect(
      (registry.getSingleMetric('routability_webhook_audit_findings') as unknown as { labelNames: string[] })
        .labelNames,
    ).toEqual(['code', 'scope']);
    expect(
      (
        registry.getSingleMetric('routability_webhook_audit_runs_total') as unknown as {
          labelNames: string[];
        }
      ).labelNames,
    ).toEqual(['result']);
  });
});
