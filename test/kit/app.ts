/** Builds the webhook app for inject() tests: real layers, static ranges, silent logs. */
import pino from 'pino';
import { Registry } from 'prom-client';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import type { ClusterSources } from '../../src/inputs/ranges/types.js';
import { buildApp } from '../../src/http/app.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { createServerMetrics } from '../../src/http/metrics.js';
import type { RuleSettings } from '../../src/config/rule-settings.js';
import { DUAL_STACK } from './gateways.js';

export const FIXTURE_SETTINGS: RuleSettings & { maxBodyBytes: number } = {
  serviceCidrs: ['10.96.0.0/12', 'fd00:10:96::/112'],
  clusterDomain: 'cluster.local',
  specPolicy: 'enforce',
  statusPolicy: 'warn',
  allowedRoutability: undefined,
  gepRevision: 'auto',
  maxBodyBytes: 7 * 1024 * 1024,
};

export function testApp(over: { sources?: ClusterSources; settings?: Partial<RuleSettings> } = {}) {
  const registry = new Registry();
  const metrics = createServerMetrics(registry);
  const app = buildApp({
    config: FIXTURE_SETTINGS,
    logger: pino({ level: 'silent' }),
    inputs: ruleInputs({
      settings: { ...FIXTURE_SETTINGS, ...over.settings },
      sources: over.sources ?? staticSources(DUAL_STACK, 'test'),
    }),
    metrics,
  });
  return { app, registry, metrics };
}

export async function post(app: ReturnType<typeof testApp>['app'], path: string, body: unknown) {
  const res = await app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read into arbitrary JSON answers
  return { status: res.statusCode, headers: res.headers, json: () => res.json() as Record<string, any> };
}
