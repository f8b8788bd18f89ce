/** `routability-webhook review`: one AdmissionReview on stdin, the server's exact answer on stdout. */
import { answerReview } from '../admission/answer.js';
import { createReviewDecoder } from '../admission/decode.js';
import { type FlagDefinitions, type FlagValues, type Parsed } from '../config/flags.js';
import { RULE_FLAGS, ruleContext, ruleSettingsFrom, type RuleSettings } from '../config/rule-settings.js';
import { errorMessage } from '../error-text.js';
import { EXIT_OK, readAll, writeLine } from '../io.js';
import type { ServiceRanges } from '../rules/index.js';
import { WEBHOOKS, type WebhookName } from '../webhooks/gateway.js';
import { defineCommand } from './command.js';

const WEBHOOK_NAMES = ['validate', 'mutate'] as const satisfies readonly WebhookName[];

const REVIEW_FLAGS = {
  ...RULE_FLAGS,
  webhook: {
    kind: 'string',
    default: 'validate',
    choices: WEBHOOK_NAMES,
    description: 'Which webhook answers: validate (POST /validate) or mutate (POST /mutate).',
  },
} as const satisfies FlagDefinitions;

interface ReviewOptions {
  readonly settings: RuleSettings;
  readonly ranges: ServiceRanges;
  readonly webhook: WebhookName;
}

function reviewOptions(flags: FlagValues<typeof REVIEW_FLAGS>): Parsed<ReviewOptions> {
  const settings = ruleSettingsFrom(flags);
  if (!settings.ok) return settings;
  const ranges = settings.value.serviceRanges;
  if (ranges === undefined)
    return {
      ok: false,
      error: '--service-cidr is required (the server reads it from the cluster; review runs offline)',
    };
  return { ok: true, value: { settings: settings.value, ranges, webhook: flags.webhook } };
}

export const command = defineCommand({
  name: 'review',
  summary: 'answer one AdmissionReview from stdin with the content the server would answer',
  flags: REVIEW_FLAGS,
  help: {
    description: ['Read one AdmissionReview JSON on stdin; print the response the server would give.'],
  },
  options: reviewOptions,
  run: async (options, { io, fail }) => {
    let body: unknown;
    try {
      const text = (await readAll(io.stdin)).toString('utf8');
      if (text.trim() === '') return fail('stdin is empty: expected one AdmissionReview as JSON');
      body = JSON.parse(text);
    } catch (err) {
      return fail(`stdin is not valid JSON: ${errorMessage(err)}`);
    }
    const ctx = ruleContext(options.settings, options.ranges);
    const webhook = WEBHOOKS[options.webhook];
    const answer = answerReview(createReviewDecoder(), (r) => webhook(r, ctx), body);
    if (!answer.ok) return fail(answer.error);
    writeLine(io.stdout, JSON.stringify(answer.review, null, 2));
    return EXIT_OK;
  },
});
