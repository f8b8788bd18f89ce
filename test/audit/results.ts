/** Audit findings and pass results built by hand, for the tests of what is made from a pass. */
import type { AuditFinding, AuditResult, AuditedGateway } from '../../src/audit/pass.js';

/** A finding: a spec violation of ClusterAddressOutsideServiceRange at the first address unless told. */
export function finding(over: Partial<AuditFinding> = {}): AuditFinding {
  const { code = 'ClusterAddressOutsideServiceRange', field = 'spec.addresses[0].value' } = over;
  return {
    severity: 'violation',
    check: 'spec',
    code,
    field,
    message: `${field}: ${code}`,
    warning: `${field}: ${code}`,
    ...over,
  };
}

/** A pass result over the given flagged Gateways (the counts are not read by what these tests build). */
export function passOf(flagged: readonly AuditedGateway[]): AuditResult {
  return {
    gateways: flagged.length,
    namespaces: new Set(flagged.map((g) => g.namespace)).size,
    pages: 1,
    flagged,
    violations: 0,
    warnings: 0,
    byCode: [],
    audited: [],
  };
}
