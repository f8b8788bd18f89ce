/** Decodes an AdmissionReview envelope; knows nothing of Gateways. */
import { Ajv, type ValidateFunction } from 'ajv';
import { asRecord, own } from '../json/record.js';
import type { AdmissionRequest, AdmissionVersion } from './review.js';
import { ADMISSION_VERSIONS } from './review.js';

export type Decoded =
  | { readonly ok: true; readonly version: AdmissionVersion; readonly request: AdmissionRequest }
  | { readonly ok: false; readonly error: string; readonly uid?: string };

const gvk = {
  type: 'object',
  required: ['group', 'version', 'kind'],
  properties: { group: { type: 'string' }, version: { type: 'string' }, kind: { type: 'string' } },
};
const gvr = {
  type: 'object',
  required: ['group', 'version', 'resource'],
  properties: { group: { type: 'string' }, version: { type: 'string' }, resource: { type: 'string' } },
};

/** The envelope only: the object inside is checked by the rules, defensively. */
const REVIEW_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'request'],
  properties: {
    apiVersion: { enum: [...ADMISSION_VERSIONS] },
    kind: { const: 'AdmissionReview' },
    request: {
      type: 'object',
      required: ['uid', 'kind', 'resource', 'operation'],
      properties: {
        uid: { type: 'string', minLength: 1, maxLength: 128 },
        kind: gvk,
        resource: gvr,
        subResource: { type: 'string' },
        name: { type: 'string' },
        namespace: { type: 'string' },
        operation: { enum: ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] },
        userInfo: { type: 'object', properties: { username: { type: 'string' } } },
        dryRun: { type: 'boolean' },
      },
    },
  },
} as const;

export type ReviewDecoder = (body: unknown) => Decoded;

/**
 * Compiles the envelope schema once. Ajv here never coerces types: a uid of 5
 * is an error, not "5" (Fastify's own ajv would coerce).
 */
export function createReviewDecoder(): ReviewDecoder {
  const ajv = new Ajv({ allErrors: false, coerceTypes: false, strict: true });
  const validate: ValidateFunction = ajv.compile(REVIEW_SCHEMA);
  return (body: unknown): Decoded => {
    if (validate(body)) {
      const review = body as { apiVersion: AdmissionVersion; request: AdmissionRequest };
      return { ok: true, version: review.apiVersion, request: review.request };
    }
    const err = validate.errors?.[0];
    const where = err?.instancePath ? err.instancePath.replaceAll('/', '.').slice(1) : 'review';
    const uid = uidOf(body);
    return {
      ok: false,
      error: `not an AdmissionReview: ${where} ${err?.message ?? 'is invalid'}`,
      ...(uid ? { uid } : {}),
    };
  };
}

/** The uid of an undecodable review, when it has one, for the log line. */
function uidOf(body: unknown): string | undefined {
  const uid = own(asRecord(own(asRecord(body), 'request')), 'uid');
  return typeof uid === 'string' ? uid.slice(0, 128) : undefined;
}
