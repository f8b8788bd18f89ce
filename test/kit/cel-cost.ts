/**
 * A worst-case cost estimate of a CEL expression, after cel-go's cost model
 * as Kubernetes uses it (k8s.io/apiserver pkg/cel/library/cost.go): every
 * node costs 1; a string function costs 1 + ⌈0.1 × length⌉ of the longest
 * string it may see (253 characters: the CRD's maxLength); `matches` costs
 * that times ⌈0.25 × the pattern's length⌉; a comprehension costs its range
 * plus, per element, its condition and step; a list has at most 16 elements
 * (the CRD's maxItems) and a list of service CIDRs at most RANGES. Higher than
 * the API server's own count (it knows the real lengths), never lower.
 */
import { parse } from '@bufbuild/cel';

/** celconfig.PerCallLimit and RuntimeCELCostBudget (per binding). */
export const PER_EXPRESSION_LIMIT = 1_000_000;
export const PER_BINDING_LIMIT = 10_000_000;

const MAX_STRING = 253;
const MAX_ITEMS = 16;
export const RANGES = 4;

const STRING_FUNCS = new Set([
  'split',
  'lowerAscii',
  'contains',
  'startsWith',
  'endsWith',
  'trim',
  'join',
  'isIP',
  'ip',
  'isCIDR',
  'cidr',
  'containsIP',
  'string',
  'int',
  '_+_',
  '_==_',
  '_!=_',
  '@in',
]);

interface Node {
  exprKind: { case: string | undefined; value: Record<string, unknown> };
}

const strCost = () => 1 + Math.ceil(0.1 * MAX_STRING);

function rangeSize(range: Node): number {
  const kind = range.exprKind;
  if (kind.case === 'listExpr') return (kind.value['elements'] as unknown[]).length || 1;
  const text = JSON.stringify(range, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  return /CIDRs/.test(text) ? RANGES : MAX_ITEMS;
}

function callCost(call: Record<string, unknown>): number {
  const args = (call['args'] as Node[]) ?? [];
  const target = call['target'] as Node | undefined;
  let cost = 1 + args.reduce((sum, a) => sum + cost_(a), 0) + (target ? cost_(target) : 0);
  const fn = call['function'] as string;
  if (fn === 'matches') {
    const pattern = args[0]?.exprKind.value['constantKind'] as { value?: unknown } | undefined;
    const length = typeof pattern?.value === 'string' ? pattern.value.length : MAX_STRING;
    cost += strCost() * Math.ceil(0.25 * length);
  } else if (STRING_FUNCS.has(fn)) cost += strCost();
  return cost;
}

function cost_(node: Node): number {
  const { case: kind, value } = node.exprKind;
  switch (kind) {
    case 'constExpr':
    case 'identExpr':
      return 1;
    case 'selectExpr':
      return 1 + cost_(value['operand'] as Node);
    case 'callExpr':
      return callCost(value);
    case 'listExpr':
      return 1 + (value['elements'] as Node[]).reduce((sum, e) => sum + cost_(e), 0);
    case 'structExpr':
      return 1 + (value['entries'] as { value: Node }[]).reduce((sum, e) => sum + cost_(e.value), 0);
    case 'comprehensionExpr': {
      const n = rangeSize(value['iterRange'] as Node);
      const body = cost_(value['loopCondition'] as Node) + cost_(value['loopStep'] as Node);
      return (
        cost_(value['iterRange'] as Node) +
        cost_(value['accuInit'] as Node) +
        n * body +
        cost_(value['result'] as Node)
      );
    }
    default:
      return 1;
  }
}

export function estimateCost(expression: string): number {
  return cost_(parse(expression).expr as unknown as Node);
}
