/**
 * Reads a YAML (or JSON, which `yaml` parses too) stream into documents,
 * keeping each node's source range so findings can point at their line.
 * One parse per input, composed one document at a time so that a large stream
 * never holds every syntax tree at once; line numbers are worked out only for
 * what is reported.
 */
import { Composer, Parser, type Document, type ParsedNode } from 'yaml';

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
    yield {
      index: ++index,
      doc: doc as Document.Parsed,
      contents: doc.contents as ParsedNode | null,
      error: first ? { offset: first.pos[0], message: first.message } : undefined,
    };
  }
}
