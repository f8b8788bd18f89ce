/** Decode → decide → encode for one review body: shared by the server and `review`. */
import type { ReviewDecoder } from './decode.js';
import { encodeReview } from './encode.js';
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
