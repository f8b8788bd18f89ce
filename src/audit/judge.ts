/** The audit's judge: the same evaluation `check` runs on a manifest, on a Gateway read from the cluster. */
import { evaluateGateway } from '../check/evaluate.js';
import type { RuleContext } from '../rules/index.js';
import type { AuditFinding, JudgeGateway } from './pass.js';

export function judgeWithContext(ctx: RuleContext): JudgeGateway {
  return (object: unknown): AuditFinding[] =>
    evaluateGateway(object, ctx).map(({ severity, check, finding }) => ({
      severity,
      check,
      code: finding.code,
      field: finding.field.toString(),
      message: finding.message,
      warning: finding.warning,
    }));
}
