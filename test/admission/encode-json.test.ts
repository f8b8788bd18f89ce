/**
 * The answer serialised at once (encodeReviewJson) is, byte for byte,
 * `JSON.stringify` of the answer object (encodeReview) that the CLI prints
 * and the goldens describe: same members, same order, same escaping. Every
 * fixture review under both webhooks, and outcomes with strings that need
 * escaping.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerReviewIn, answerReviewJsonIn } from '../../src/admission/answer.js';
import { createReviewDecoder } from '../../src/admission/decode.js';
import { encodeReview, encodeReviewJson } from '../../src/admission/encode.js';
import type { Outcome } from '../../src/admission/outcome.js';
import { ADMISSION_VERSIONS } from '../../src/admission/review.js';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { WEBHOOKS, type WebhookName } from '../../src/webhooks/gateway.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { DUAL_STACK } from '../kit/gateways.js';

const folder = join(import.meta.dirname, '..', 'fixtures', 'reviews');
const base: Outcome = { kind: 'allowed', warnings: [], auditAnnotations: {}, codes: [] };
const tricky = 'quote " backslash \\ newline \n tab \t nul \u0000 é ☃ \ud83d\ude00 lone \ud800 </script>';

describe('encodeReviewJson', () => {
  it('every fixture under both webhooks: the same bytes as JSON.stringify of the answer object', () => {
    const ctx = ruleInputs({
      settings: FIXTURE_SETTINGS,
      sources: staticSources(DUAL_STACK, 'test'),
    }).current()!.ctx;
    const decode = createReviewDecoder();
    const kinds = new Set<string>();
    for (const file of readdirSync(folder).filter((f) => f.endsWith('.json')))
      for (const webhook of Object.keys(WEBHOOKS) as WebhookName[]) {
        const body: unknown = JSON.parse(readFileSync(join(folder, file), 'utf8'));
        const object = answerReviewIn(decode, WEBHOOKS[webhook], ctx, body);
        const json = answerReviewJsonIn(decode, WEBHOOKS[webhook], ctx, body);
        if (!object.ok || !json.ok) throw new Error(`${file}: not decoded`);
        expect(json.json, `${file} ${webhook}`).toBe(JSON.stringify(object.review));
        kinds.add(object.outcome.kind + (object.review.response.patch ? ' with patch' : ''));
      }
    // The fixtures reach every shape of answer.
    expect([...kinds].sort()).toEqual(['allowed', 'denied', 'patched', 'patched with patch']);
  });

  const outcomes: [string, Outcome][] = [
    ['allowed, nothing else', base],
    [
      'allowed with warnings and annotations',
      { ...base, warnings: [tricky, ''], auditAnnotations: { [tricky]: tricky, b: '' } },
    ],
    ['patched, empty patch', { ...base, kind: 'patched', patch: [] }],
    [
      'patched with non-ASCII values',
      { ...base, kind: 'patched', patch: [{ op: 'add', path: '/a~1b', value: tricky }], warnings: ['w'] },
    ],
    [
      'denied with causes',
      {
        ...base,
        kind: 'denied',
        message: tricky,
        causes: [{ field: 'spec.addresses[0].value', reason: 'FieldValueInvalid', message: tricky }],
        auditAnnotations: { k: 'v' },
      },
    ],
    ['denied without causes', { ...base, kind: 'denied', message: 'no', causes: [] }],
  ];
  for (const version of ADMISSION_VERSIONS)
    for (const [name, outcome] of outcomes)
      it(`${version}, ${name}: the same bytes`, () => {
        for (const uid of ['u-1', tricky])
          expect(encodeReviewJson(version, uid, outcome)).toBe(
            JSON.stringify(encodeReview(version, uid, outcome)),
          );
      });
});
