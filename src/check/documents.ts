/**
 * Reads a YAML (or JSON, which `yaml` parses too) stream into documents,
 * keeping each node's source range so findings can point at their line.
 * One parse per input, composed one document at a time so that a large stream
 * never holds every syntax tree at once; line numbers are worked out only for
 * what is reported.
 */
import { Composer, isAlias, isCollection, isPair, Parser, type Document, type ParsedNode } from 'yaml';

/**
 * The parse options `check` uses, shared with the benchmark so that its bare
 * parse measures the same work. `merge`: Kubernetes' YAML decoder honours `<<`
 * merge keys. `prettyErrors: false`: positions are computed on demand instead
 * of by a line counter fed during every parse.
 */
export const YAML_OPTIONS = { prettyErrors: false, merge: true } as const;

export interface ParsedDocument {
  /** 1-based position of the document in its stream. */
  readonly index: number;
  readonly doc: Document.Parsed;
  /** The root node; null for an empty document. */
  readonly contents: ParsedNode | null;
  /** The first parse error, when the document is broken. */
  readonly error: { readonly offset: number; readonly message: string } | undefined;
}

/** The documents of a stream, in order: what `parseAllDocuments` returns, without keeping them all. */
export function* readDocuments(text: string): Generator<ParsedDocument> {
  const composer = new Composer(YAML_OPTIONS);
  let index = 0;
  // As parseAllDocuments does: forceDoc so an empty stream is one empty document, and errors at the end are placed.
  for (const doc of composer.compose(new Parser().parse(text), true, text.length)) {
    const first = doc.errors[0];
    const contents = doc.contents as ParsedNode | null;
    // Counted before anything expands an alias: extraction and conversion work on the expanded tree.
    const bomb = first ? undefined : excessiveAliasing(contents);
    yield {
      index: ++index,
      doc: doc as Document.Parsed,
      contents,
      error: first
        ? { offset: first.pos[0], message: first.message }
        : bomb
          ? { offset: contents?.range[0] ?? 0, message: bomb }
          : undefined,
    };
  }
}

/**
 * Alias expansion bounds, checked on the syntax tree before anything is
 * expanded. Kubernetes' YAML decoder (go-yaml, since CVE-2019-11253) refuses
 * a document once more than 1,000 nodes have been decoded, more than 100 of
 * them inside alias expansions, and those make up more than a share of all:
 * 99 % up to 400,000 nodes, falling linearly to 10 % at 4,000,000 and
 * beyond. `check` applies the same rule to the document as it would be once
 * expanded, and also caps the nodes aliases add, since extraction (Lists of
 * Lists are flattened) and conversion both work on the expanded tree: the
 * ratio alone lets a bomb with a wide fan-out (each level 100 aliases of the
 * one below) grow to millions of nodes.
 */
export const MAX_ALIAS_EXPANSION = 100_000;
const ALIAS_RATIO_LOW = 400_000;
const ALIAS_RATIO_HIGH = 4_000_000;

/** The share of nodes from alias expansions go-yaml allows among `nodes` decoded nodes. */
export function allowedAliasRatio(nodes: number): number {
  if (nodes <= ALIAS_RATIO_LOW) return 0.99;
  if (nodes >= ALIAS_RATIO_HIGH) return 0.1;
  return 0.99 - (0.89 * (nodes - ALIAS_RATIO_LOW)) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW);
}

/** A subtree's nodes as if every alias were a copy of its anchor's node, and how many of them such copies are. */
interface Expanded {
  nodes: number;
  aliased: number;
}

/**
 * Counts a document's nodes as expanded, without expanding: an alias counts
 * as itself plus a copy of its anchor's subtree, whose size was worked out when the
 * anchor was read (an alias names the latest anchor before it, so document
 * order is enough). The work is linear in the source whatever the expansion.
 */
function countExpanded(root: unknown): Expanded {
  const anchors = new Map<string, Expanded>();
  const count = (node: unknown): Expanded => {
    if (isAlias(node)) {
      const target = anchors.get(node.source) ?? { nodes: 0, aliased: 0 };
      return { nodes: 1 + target.nodes, aliased: target.nodes };
    }
    const total: Expanded = { nodes: 1, aliased: 0 };
    const add = (child: unknown): void => {
      if (child === null || child === undefined) return;
      const c = count(child);
      total.nodes += c.nodes;
      total.aliased += c.aliased;
    };
    if (isCollection(node))
      for (const item of node.items as unknown[])
        if (isPair(item)) {
          add(item.key);
          add(item.value);
        } else add(item);
    const anchor = (node as { anchor?: unknown }).anchor;
    if (typeof anchor === 'string') anchors.set(anchor, total);
    return total;
  };
  return count(root);
}

/**
 * Why a document's aliases expand too far to be read (the rules above), or
 * undefined: named as an input error, like Kubernetes' "document contains
 * excessive aliasing".
 */
export function excessiveAliasing(root: unknown): string | undefined {
  if (root === null || root === undefined) return undefined;
  const { nodes, aliased } = countExpanded(root);
  if (aliased > MAX_ALIAS_EXPANSION)
    return `document contains excessive aliasing: its aliases expand to more than ${MAX_ALIAS_EXPANSION.toLocaleString('en-US')} nodes`;
  if (aliased > 100 && nodes > 1_000 && aliased / nodes > allowedAliasRatio(nodes))
    return `document contains excessive aliasing: aliases make ${aliased.toLocaleString('en-US')} of its ${nodes.toLocaleString('en-US')} nodes once expanded`;
  return undefined;
}
