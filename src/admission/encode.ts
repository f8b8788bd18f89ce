/** Turns an Outcome into the AdmissionReview the apiserver expects. */
import type { Outcome } from './outcome.js';
import type { AdmissionResponse, AdmissionReviewResponse, AdmissionVersion } from './review.js';

export function encodeReview(
  version: AdmissionVersion,
  uid: string,
  outcome: Outcome,
): AdmissionReviewResponse {
  const extras: { warnings?: readonly string[]; auditAnnotations?: Readonly<Record<string, string>> } = {};
  if (outcome.warnings.length > 0) extras.warnings = outcome.warnings;
  if (Object.keys(outcome.auditAnnotations).length > 0) extras.auditAnnotations = outcome.auditAnnotations;
  let response: AdmissionResponse;
  switch (outcome.kind) {
    case 'allowed':
      response = { uid, allowed: true, ...extras };
      break;
    case 'patched':
      response =
        outcome.patch.length > 0
          ? {
              uid,
              allowed: true,
              patchType: 'JSONPatch',
              patch: Buffer.from(JSON.stringify(outcome.patch)).toString('base64'),
              ...extras,
            }
          : { uid, allowed: true, ...extras };
      break;
    case 'denied':
      response = {
        uid,
        allowed: false,
        status: {
          code: 403,
          reason: 'Forbidden',
          message: outcome.message,
          details: {
            causes: outcome.causes.map((c) => ({ field: c.field, reason: c.reason, message: c.message })),
          },
        },
        ...extras,
      };
      break;
  }
  return { apiVersion: version, kind: 'AdmissionReview', response };
}
