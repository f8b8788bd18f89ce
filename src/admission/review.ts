/** The admission.k8s.io AdmissionReview shapes this server reads and writes. */

export const ADMISSION_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
export type AdmissionVersion = (typeof ADMISSION_VERSIONS)[number];

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** Who sent the request (authentication.k8s.io UserInfo); only the name is read. */
  readonly userInfo?: { readonly username?: string };
  readonly object?: unknown;
  readonly oldObject?: unknown;
  readonly dryRun?: boolean;
}

export interface StatusCause {
  readonly reason: string;
  readonly message: string;
  readonly field: string;
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: {
    readonly code: number;
    readonly reason: string;
    readonly message: string;
    readonly details?: { readonly causes: readonly StatusCause[] };
  };
  readonly patch?: string;
  readonly patchType?: 'JSONPatch';
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

export interface AdmissionReviewResponse {
  readonly apiVersion: AdmissionVersion;
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}
