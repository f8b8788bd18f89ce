/** Turns an Outcome into the AdmissionReview the apiserver expects. */
import type { Outcome } from './outcome.js';
import type { AdmissionResponse, AdmissionReviewResponse, AdmissionVersion, StatusCause } from './review.js';

/** Kubernetes field-error type → metav1.CauseType. */
const CAUSE_TYPES: Readonly<Record<string, string>> = {
  'Invalid value': 'FieldValueInvalid',
  'Unsupported value': 'FieldValueNotSupported',
  'Too long': 'FieldValueTooLong',
  'Required value': 'FieldValueRequired',
  Forbidden: 'FieldValueForbidden',
};

/** `spec.x: Invalid value: "v": detail` → cause {field, reason FieldValueInvalid, message `Invalid value: "v": detail`}. */
export function causeOf(field: string, message: string): StatusCause {
  const rest = message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
  const type = rest.slice(0, rest.indexOf(':'));
  return { field, reason: CAUSE_TYPES[type] ?? 'FieldValueInvalid', message: rest };
}

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
          details: { causes: outcome.causes.map((c) => causeOf(c.field, c.message)) },
        },
        ...extras,
      };
      break;
  }
  return { apiVersion: version, kind: 'AdmissionReview', response };
}
