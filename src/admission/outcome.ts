/**
 * What a webhook decided, as a value (controller-runtime's admission.Response
 * idea): the protocol layer turns it into an AdmissionReview, and nothing
 * here throws.
 */
export interface FieldCause {
  /** `spec.addresses[0].value` */
  readonly field: string;
  /** The field-error type as a `metav1.CauseType` (`FieldValueInvalid`, `FieldValueNotSupported`, …). */
  readonly reason: string;
  /** The field error without its field (`Invalid value: "v": detail`). */
  readonly message: string;
}

interface Common {
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
  /** Rule codes involved, for logs and metrics. */
  readonly codes: readonly string[];
}

export type Outcome =
  | (Common & { readonly kind: 'allowed' })
  | (Common & { readonly kind: 'denied'; readonly message: string; readonly causes: readonly FieldCause[] })
  | (Common & { readonly kind: 'patched'; readonly patch: readonly object[] });

export const ALLOWED_UNTOUCHED: Outcome = Object.freeze({
  kind: 'allowed',
  warnings: [],
  auditAnnotations: {},
  codes: [],
});
