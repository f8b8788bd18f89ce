/** Rules for spec.addresses: what a user may request. */
import type { AddressEntry } from './gateway.js';
import { checkAddressScope, checkRoutabilitySyntax, isWellKnown } from './routability.js';
import { finding, type Finding, type RuleContext } from './types.js';

export function checkSpecAddress(
  entry: AddressEntry,
  ctx: RuleContext,
  gateway: { namespace: string; name: string },
): Finding[] {
  // An entry without routability lets the implementation pick any scope.
  if (entry.routability === undefined) return [];
  const routabilityField = () => entry.field.child('routability');
  const syntax = checkRoutabilitySyntax(entry.routability, routabilityField);
  if (syntax) return [syntax];
  const routability = entry.routability as string;
  if (!isWellKnown(routability)) {
    // Domain-prefixed values are opaque; only the optional allow-list applies.
    if (ctx.allowedRoutability && !ctx.allowedRoutability.has(routability)) {
      return [
        finding('RoutabilityNotAllowed', routabilityField(), {
          value: routability,
          allowed: [...ctx.allowedRoutability].sort(),
        }),
      ];
    }
    return [];
  }
  return checkAddressScope(entry, routability, ctx, { requesting: true, unset: false, gateway });
}
