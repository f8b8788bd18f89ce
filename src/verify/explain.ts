/**
 * What a failed step means, in docs/troubleshooting.md's words: the API
 * server's text for a webhook it could not call, matched to the row that
 * explains it, and the fix that row gives.
 */

interface Cause {
  /** A piece of the API server's (or Go's) text that identifies the cause. */
  readonly match: RegExp;
  readonly why: string;
  readonly fix: string;
}

const CALL_FAILURES: readonly Cause[] = [
  {
    match: /x509: certificate signed by unknown authority|certificate verify failed/,
    why: 'caBundle is not the CA that signed the served certificate',
    fix: 'certManager: is cainjector running? helm: `helm upgrade --reuse-values` rewrites caBundle from the Secret; existingSecret: update tls.existingSecret.caBundle',
  },
  {
    match: /x509: certificate is valid for/,
    why: "the Service's name or namespace changed, the certificate did not",
    fix: 'delete the TLS Secret (helm mode) or reissue, then `helm upgrade --reuse-values`',
  },
  {
    match: /legacy Common Name field/,
    why: 'the serving certificate has only a CN',
    fix: 'reissue with the DNS SAN <svc>.<ns>.svc (`routability-webhook certs` writes one)',
  },
  {
    match: /x509: certificate has expired|certificate has expired/,
    why: 'the serving certificate has expired',
    fix: 'renew it (cert-manager: `kubectl describe certificate`; helm mode: delete the Secret and `helm upgrade --reuse-values`)',
  },
  {
    match: /context deadline exceeded|no endpoints available|connection refused|i\/o timeout|no such host/,
    why: 'no ready replica reachable in timeoutSeconds',
    fix: 'check the pods and /readyz; a NetworkPolicy or firewall between the control plane and the pods (docs/operations.md § Network exposure)',
  },
];

/** The troubleshooting row for a "failed calling webhook" text, or a generic one. */
export function explainCallFailure(message: string): string {
  const cause = CALL_FAILURES.find((c) => c.match.test(message));
  if (!cause)
    return 'the API server could not call the webhook (docs/troubleshooting.md § Certificate errors)';
  return `${cause.why}: ${cause.fix}`;
}

/** The API server's text when a webhook it must call failed (failurePolicy Fail). */
export function isCallFailure(message: string): boolean {
  return /failed calling webhook/.test(message);
}

export const PRUNED =
  'the Gateway CRD lacks the field (never patched, or Gateway API was upgraded since): the API server prunes it before the webhook sees it, so nothing is checked. Apply the CRD patch (hook Job via `helm upgrade --reuse-values --set crdPatch.enabled=true`, or `routability-webhook crd-patch`)';

export const PARAMS_MISSING =
  'without it the binding is skipped (parameterNotFoundAction: Allow): the policy enforces nothing. With the webhook, serve (--policy-params) fills it; alone, the chart writes policy.serviceCIDRs';
