/** `routability-webhook review`: one AdmissionReview on stdin, the server's exact answer on stdout. */
import { answerReview } from '../admission/answer.js';
import { createReviewDecoder } from '../admission/decode.js';
import { helpText, parseFlags, REVIEW_FLAGS, ruleContext, ruleSettingsFrom } from '../config.js';
import { ServiceRanges } from '../rules/networks.js';
import { WEBHOOKS, type WebhookName } from '../webhooks/gateway.js';
import { EXIT_OK, EXIT_USAGE, readAll, writeLine, type CommandIO } from './io.js';

export async function runReview(argv: readonly string[], io: CommandIO): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    writeLine(
      io.stdout,
      helpText(
        'review',
        'Read one AdmissionReview JSON on stdin; print the response the server would give.',
        REVIEW_FLAGS,
      ),
    );
    return EXIT_OK;
  }
  const fail = (message: string) => {
    writeLine(io.stderr, `routability-webhook review: ${message}`);
    return EXIT_USAGE;
  };
  const parsed = parseFlags(REVIEW_FLAGS, argv, io.env);
  if (!parsed.ok) return fail(parsed.error);
  const settings = ruleSettingsFrom(parsed.value.flags);
  if (!settings.ok) return fail(settings.error);
  if (settings.value.serviceCidrs.length === 0)
    return fail('--service-cidr is required (the server reads it from the cluster; review runs offline)');
  const ranges = ServiceRanges.parse(settings.value.serviceCidrs);
  if (!ranges.ok) return fail(ranges.error);

  let body: unknown;
  try {
    const text = (await readAll(io.stdin)).toString('utf8');
    if (text.trim() === '') return fail('stdin is empty: expected one AdmissionReview as JSON');
    body = JSON.parse(text);
  } catch (err) {
    return fail(`stdin is not valid JSON: ${(err as Error).message}`);
  }
  const ctx = ruleContext(settings.value, ranges.ranges);
  const webhook = WEBHOOKS[parsed.value.flags['webhook'] as WebhookName];
  const answer = answerReview(createReviewDecoder(), (r) => webhook(r, ctx), body);
  if (!answer.ok) return fail(answer.error);
  writeLine(io.stdout, JSON.stringify(answer.review, null, 2));
  return EXIT_OK;
}
