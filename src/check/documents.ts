/**
 * Reads a YAML (or JSON, which `yaml` parses too) stream into documents,
 * keeping each node's source range so findings can point at their line.
 * One parse per input; line numbers are worked out only for what is reported.
 */
import { parseAllDocuments, type Document, type ParsedNode } from 'yaml';

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

export function readDocuments(text: string): ParsedDocument[] {
  const docs = parseAllDocuments(text, YAML_OPTIONS);
  const out: ParsedDocument[] = [];
  docs.forEach((doc, i) => {
    const first = doc.errors[0];
    out.push({
      index: i + 1,
      doc,
      contents: doc.contents,
      error: first ? { offset: first.pos[0], message: first.message } : undefined,
    });
  });
  return out;
}
