/** The loop hands each pass of the leader to the report writer, and only the leader's. */
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { changeListeners } from '../../src/inputs/ranges/changes.js';
import { startAuditLoop, type AuditLoop } from '../../src/audit/loop.js';
import { auditMetrics } from '../../src/audit/metrics.js';
import { judgeWithContext } from '../../src/audit/judge.js';
import type { AuditResult } from '../../src/audit/pass.js';
import type { GatewayPage } from '../../src/audit/gateway-pages.js';
import { context as baseContext, ranges } from '../kit/gateways.js';
import { capturingLogger } from '../kit/helpers.js';
import { gateway } from '../kit/fake-apiserver.js';
import { eventually, sleep } from '../kit/eventually.js';

let loop: AuditLoop | undefined;
afterEach(async () => {
  await loop?.stop();
  loop = undefined;
});

describe('startAuditLoop afterPass', () => {
  it('is called with each result while leading, never while another replica leads, and its failure is only logged', async () => {
    const { logger, lines } = capturingLogger();
    let leading = false;
    const inputs = changeListeners();
    const written: AuditResult[] = [];
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      onInputsChange: inputs.add,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        yield {
          items: [
            gateway('apps', 'g', {
              spec: [{ type: 'IPAddress', value: '192.168.1.1', routability: 'Cluster' }],
            }),
          ],
          page: 1,
          restarted: false,
        };
      },
      judge: () => judgeWithContext(baseContext({ ranges: ranges('10.96.0.0/12') })),
      leading: () => leading,
      afterPass: async (result) => {
        written.push(result);
        if (written.length === 2) throw new Error('boom');
      },
      metrics: auditMetrics(new Registry()),
      logger,
    });
    // Not leading: passes happen (the start pass) but nothing is written.
    await sleep(100);
    expect(written).toEqual([]);
    leading = true;
    inputs.emit();
    await eventually(() => written.length === 1, 'a write as leader');
    expect(written[0]!.violations).toBe(1);
    inputs.emit();
    await eventually(() => written.length === 2, 'a second write');
    await eventually(
      () => lines.some((l) => l.msg === 'audit: writing the results failed'),
      'the logged failure',
    );
    expect(loop.describe()['lastError']).toBeUndefined();
    expect(loop.lastResult()?.violations).toBe(1);
  });

  it('a leader that loses the lease mid-pass asks for no further page and writes nothing', async () => {
    const { logger, lines } = capturingLogger();
    let leading = true;
    const pagesAsked: number[] = [];
    const written: AuditResult[] = [];
    const page = (n: number): GatewayPage => ({
      items: [
        gateway('apps', `g${n}`, {
          spec: [{ type: 'IPAddress', value: '192.168.1.1', routability: 'Cluster' }],
        }),
      ],
      page: n,
      restarted: false,
    });
    loop = startAuditLoop({
      intervalMs: 3_600_000,
      debounceMs: 5,
      listPages: async function* (): AsyncGenerator<GatewayPage> {
        for (let n = 1; n <= 5; n++) {
          pagesAsked.push(n);
          // The renew deadline passes while page 2 is being read.
          if (n === 2) leading = false;
          yield page(n);
        }
      },
      judge: () => judgeWithContext(baseContext({ ranges: ranges('10.96.0.0/12') })),

      leading: () => leading,
      afterPass: async (result) => {
        written.push(result);
      },
      metrics: auditMetrics(new Registry()),
      logger,
    });
    await eventually(() => lines.some((l) => l.msg.startsWith('audit pass failed')), 'the abandoned pass');
    expect(pagesAsked).toEqual([1, 2]);
    expect(written).toEqual([]);
    expect(String(lines.find((l) => l.msg.startsWith('audit pass failed'))!['err'])).toContain(
      'no longer the audit leader',
    );
  });
});
