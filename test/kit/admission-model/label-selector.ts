/**
 * metav1.LabelSelector as the API server reads it (k8s.io/apimachinery
 * pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector, pkg/labels/selector.go):
 * matchLabels and matchExpressions are ANDed; In needs the key with one of the
 * values, NotIn matches a missing key too, Exists/DoesNotExist test the key;
 * an empty selector matches everything. An unknown operator is an error.
 */
import { isObj } from './types.js';

export type Labels = Readonly<Record<string, string>>;

export interface Selector {
  readonly matchLabels?: Labels;
  readonly matchExpressions?: readonly { key: string; operator: string; values?: readonly string[] }[];
}

/** undefined (a nil selector) and {} both match everything, as the webhook defaults them. */
export function selectorMatches(selector: unknown, labels: Labels): boolean {
  if (selector === undefined || selector === null) return true;
  if (!isObj(selector)) throw new Error(`label selector is not an object: ${JSON.stringify(selector)}`);
  const s = selector as Selector;
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of s.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[e.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        throw new Error(`"${e.operator}" is not a valid label selector operator`);
    }
  }
  return true;
}

export function labelsOf(object: unknown): Labels {
  const metadata = isObj(object) ? object['metadata'] : undefined;
  const labels = isObj(metadata) ? metadata['labels'] : undefined;
  return isObj(labels) ? (labels as Labels) : {};
}
