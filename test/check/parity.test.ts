/**
 * Parity with the server: for every fixture review in test/fixtures/reviews/,
 * `check` on the review's embedded object reports the same rule codes and
 * field paths, with the same severities, as the engine does on the review.
 *
 * Comparable: Gateway reviews with an object, CREATE or UPDATE, main resource
 * (spec rules) or status subresource (status rules plus the mutating
 * webhook's notices), whose oldObject makes no difference to the engine's
 * findings. Excluded, and listed in the test output with the reason:
 * - DELETE reviews and non-Gateway kinds: check never sees those as Gateways;
 * - UPDATEs where ratcheting against oldObject changes the result (unchanged
 *   entries allowed with a warning, or status conditions unchanged): a manifest
 *   has no previous version, so check always answers as for a new object.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/config/flags.js';
import { RULE_FLAGS, ruleContext, ruleSettingsFrom } from '../../src/config/rule-settings.js';
import {
  mutateGateway,
  ServiceRanges,
  validateGateway,
  type Finding,
  type GatewayRequest,
} from '../../src/rules/index.js';
import { check, RANGES, REPO } from './support.js';

const FOLDER = join(REPO, 'test', 'fixtures', 'reviews');
const files = readdirSync(FOLDER)
  .filter((f) => f.endsWith('.json'))
  .sort();

function engineContext() {
  const flags = parseFlags(RULE_FLAGS, RANGES, {});
  if (!flags.ok) throw new Error(flags.error);
  const settings = ruleSettingsFrom(flags.value.flags);
  if (!settings.ok) throw new Error(settings.error);
  const ranges = ServiceRanges.parse(settings.value.serviceCidrs);
  if (!ranges.ok) throw new Error(ranges.error);
  return ruleContext(settings.value, ranges.ranges);
}
const ctx = engineContext();

type Row = { severity: 'violation' | 'warning'; code: string; field: string };
const rows = (severity: Row['severity'], findings: readonly Finding[]): Row[] =>
  findings.map((f) => ({ severity, code: f.code, field: f.field.toString() }));

function engineRows(request: GatewayRequest): Row[] {
  const result = validateGateway(request, ctx);
  const out = [
    ...rows('violation', result.violations),
    ...rows('warning', result.warned),
    ...rows('warning', result.notices),
  ];
  if (request.subResource === 'status') out.push(...rows('warning', mutateGateway(request, ctx).notices));
  return out;
}

interface Classified {
  file: string;
  request: GatewayRequest & { kind?: { kind?: string } };
  excluded?: string;
}

function classify(file: string): Classified {
  const review = JSON.parse(readFileSync(join(FOLDER, file), 'utf8')) as { request: Classified['request'] };
  const request = review.request;
  const sub = request.subResource ?? '';
  if (request.kind?.kind !== 'Gateway')
    return { file, request, excluded: `kind ${request.kind?.kind}: not a Gateway` };
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE')
    return { file, request, excluded: `${request.operation}: check answers as for CREATE` };
  if (request.object === undefined || request.object === null)
    return { file, request, excluded: 'no object' };
  if (sub !== '' && sub !== 'status') return { file, request, excluded: `subresource ${sub}` };
  if (request.operation === 'UPDATE') {
    const withOld = engineRows(request);
    const withoutOld = engineRows({ ...request, oldObject: undefined });
    if (
      JSON.stringify(withOld) !== JSON.stringify(withoutOld) ||
      validateGateway(request, ctx).ratcheted.length > 0
    )
      return { file, request, excluded: 'UPDATE whose oldObject changes the findings (ratcheting)' };
  }
  return { file, request };
}

const classified = files.map(classify);
const comparable = classified.filter((c) => c.excluded === undefined);
const excluded = classified.filter((c) => c.excluded !== undefined);

describe('check agrees with the engine on the fixture reviews', () => {
  it('the review fixtures exist (the server adds them) and most are comparable', () => {
    expect(files.length, `no AdmissionReview fixtures in ${FOLDER}`).toBeGreaterThan(0);
    expect(comparable.length).toBeGreaterThanOrEqual(10);
    // Not a vacuous comparison: most comparable reviews do have findings, spec and status alike.
    expect(comparable.filter((c) => engineRows(c.request).length > 0).length).toBeGreaterThanOrEqual(8);
    expect(
      comparable.some((c) => c.request.subResource === 'status' && engineRows(c.request).length > 0),
    ).toBe(true);
    console.info(
      `parity: ${comparable.length} comparable reviews; excluded: ${excluded.map((c) => `${c.file} (${c.excluded})`).join(', ')}`,
    );
  });

  for (const { file, request } of comparable) {
    const scope = request.subResource === 'status' ? 'status' : 'spec';
    it(`${file} (${request.operation}${scope === 'status' ? ' gateways/status' : ''})`, async () => {
      const r = await check(['-f', '-', ...RANGES, '-o', 'json'], { stdin: JSON.stringify(request.object) });
      const report = JSON.parse(r.stdout);
      expect(report.summary.gateways).toBe(1);
      const gateway = report.files[0].gateways[0];
      const fromCheck: Row[] = gateway.findings
        .filter((f: { check: string }) => f.check === scope)
        .map((f: Row) => ({ severity: f.severity, code: f.code, field: f.field }));
      expect(fromCheck).toEqual(engineRows(request));
      const anyViolation = gateway.findings.some((f: Row) => f.severity === 'violation');
      expect(r.code).toBe(anyViolation ? 1 : 0);
    });
  }
});
