/** Turns an Outcome into the AdmissionReview the apiserver expects. */
import type { Outcome } from './outcome.js';
import type { AdmissionResponse, AdmissionReviewResponse, AdmissionVersion } from './review.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** True when `record` has an own enumerable key (without building the array of keys). */
function hasKeys(record: Readonly<Record<string, string>>): boolean {
  for (const key in record) if (Object.hasOwn(record, key)) return true;
  return false;
}

/** The response without warnings and annotations, which encodeReview adds last (key order is the golden's). */
function decision(uid: string, outcome: Outcome): Mutable<AdmissionResponse> {
  switch (outcome.kind) {
    case 'allowed':
      return { uid, allowed: true };
    case 'patched':
      return outcome.patch.length > 0
        ? {
            uid,
            allowed: true,
            patchType: 'JSONPatch',
            patch: Buffer.from(JSON.stringify(outcome.patch)).toString('base64'),
          }
        : { uid, allowed: true };
    case 'denied':
      return {
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
      };
  }
}

export function encodeReview(
  version: AdmissionVersion,
  uid: string,
  outcome: Outcome,
): AdmissionReviewResponse {
  const response = decision(uid, outcome);
  if (outcome.warnings.length > 0) response.warnings = outcome.warnings;
  if (hasKeys(outcome.auditAnnotations)) response.auditAnnotations = outcome.auditAnnotations;
  return { apiVersion: version, kind: 'AdmissionReview', response };
}
