/** Rules for spec.addresses: what a user may request. */
import type { AddressEntry } from './gateway.js';
import { checkAddressScope, readRoutability, TESTING_PREFIX, TESTING_SENTINEL } from './routability.js';
import { finding, type Finding, type RuleContext } from './types.js';

export function checkSpecAddress(
  entry: AddressEntry,
  ctx: RuleContext,
  gateway: { namespace: string; name: string },
): Finding[] {
  const routability = readRoutability(entry, ctx, false);
  switch (routability.kind) {
    case 'invalid':
      return [routability.finding];
    case 'none':
      // No requirement: the implementation picks its default.
      return [];
    case 'prefixed':
      return checkPrefixed(entry, routability.value, ctx);
    default:
      return checkAddressScope(entry, routability, ctx, { requesting: true, gateway });
  }
}

/** Domain-prefixed values are opaque; upstream's test values and the optional allow-list apply. */
function checkPrefixed(entry: AddressEntry, value: string, ctx: RuleContext): Finding[] {
  const field = () => entry.field.child('routability');
  if (ctx.revision === 'experimental' && value.startsWith(`${TESTING_PREFIX}/`)) {
    // Conformance's sentinel must be accepted; other test values are admitted and left unsatisfied.
    return value === TESTING_SENTINEL ? [] : [finding('RoutabilityTestingValue', field(), { value })];
  }
  if (ctx.allowedRoutability && !ctx.allowedRoutability.has(value)) {
    return [
      finding('RoutabilityNotAllowed', field(), {
        value,
        allowed: [...ctx.allowedRoutability].sort(),
        revision: ctx.revision ?? 'provisional',
      }),
    ];
  }
  return [];
}
