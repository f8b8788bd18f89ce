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

/** `{"apiVersion":…,"kind":"AdmissionReview","response":{"uid":` of each version, built once. */
const OPENING: Readonly<Record<AdmissionVersion, string>> = {
  'admission.k8s.io/v1': `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":`,
  'admission.k8s.io/v1beta1': `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"uid":`,
};

/** The decision's members after the uid, as encodeReview orders them. */
function decisionJson(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'allowed':
      return ',"allowed":true';
    case 'patched':
      // The patch's JSON goes to base64 straight from its string; base64 needs no JSON escaping.
      return outcome.patch.length > 0
        ? `,"allowed":true,"patchType":"JSONPatch","patch":"${Buffer.from(JSON.stringify(outcome.patch)).toString('base64')}"`
        : ',"allowed":true';
    case 'denied':
      return `,"allowed":false,"status":${JSON.stringify(decision('', outcome).status)}`;
  }
}

/**
 * The answer as the string sent: `JSON.stringify(encodeReview(…))`, byte for
 * byte, without building the answer's objects first. The fixed parts are
 * constants; only the uid, the patch, the denial, the warnings and the
 * annotations go through JSON.stringify.
 */
export function encodeReviewJson(version: AdmissionVersion, uid: string, outcome: Outcome): string {
  let json = OPENING[version] + JSON.stringify(uid) + decisionJson(outcome);
  if (outcome.warnings.length > 0) json += `,"warnings":${JSON.stringify(outcome.warnings)}`;
  if (hasKeys(outcome.auditAnnotations))
    json += `,"auditAnnotations":${JSON.stringify(outcome.auditAnnotations)}`;
  return `${json}}}`;
}
