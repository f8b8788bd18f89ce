/** Decode → decide → encode for one review body: shared by the server and `review`. */
import type { ReviewDecoder } from './decode.js';
import { encodeReview, encodeReviewJson } from './encode.js';
import type { Outcome } from './outcome.js';
import type { AdmissionRequest, AdmissionReviewResponse } from './review.js';

export type Answer =
  | {
      readonly ok: true;
      readonly request: AdmissionRequest;
      readonly outcome: Outcome;
      readonly review: AdmissionReviewResponse;
    }
  | { readonly ok: false; readonly error: string; readonly uid?: string };

export function answerReview(
  decode: ReviewDecoder,
  decide: (request: AdmissionRequest) => Outcome,
  body: unknown,
): Answer {
  return answerReviewIn(decode, decide, undefined, body);
}

/** answerReview with the decision's context passed along, so a server needs no closure per review. */
export function answerReviewIn<C>(
  decode: ReviewDecoder,
  decide: (request: AdmissionRequest, ctx: C) => Outcome,
  ctx: C,
  body: unknown,
): Answer {
  const decoded = decode(body);
  if (!decoded.ok) return decoded;
  const outcome = decide(decoded.request, ctx);
  return {
    ok: true,
    request: decoded.request,
    outcome,
    review: encodeReview(decoded.version, decoded.request.uid, outcome),
  };
}

export type JsonAnswer =
  | {
      readonly ok: true;
      readonly request: AdmissionRequest;
      readonly outcome: Outcome;
      /** The AdmissionReview answer, serialised (encodeReviewJson). */
      readonly json: string;
    }
  | { readonly ok: false; readonly error: string; readonly uid?: string };

/** answerReviewIn with the answer serialised at once, for the server: no answer objects built. */
export function answerReviewJsonIn<C>(
  decode: ReviewDecoder,
  decide: (request: AdmissionRequest, ctx: C) => Outcome,
  ctx: C,
  body: unknown,
): JsonAnswer {
  const decoded = decode(body);
  if (!decoded.ok) return decoded;
  const outcome = decide(decoded.request, ctx);
  return {
    ok: true,
    request: decoded.request,
    outcome,
    json: encodeReviewJson(decoded.version, decoded.request.uid, outcome),
  };
}
