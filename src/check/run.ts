/**
 * Checks a list of inputs: read, parse once, extract Gateways, evaluate,
 * and place each finding at its line. Every input is checked even when an
 * earlier one is broken; problems become InputErrors, never exceptions.
 */
import { errorMessage } from '../error-text.js';
import { readFileSync } from 'node:fs';
import { isScalar, type Document, type Node } from 'yaml';
import type { AllocationPrefetch } from '../inputs/allocations/allocation-prefetch.js';
import type { RuleContext } from '../rules/index.js';
import { readDocuments } from './documents.js';
import { evaluateGateway } from '../findings/evaluate.js';
import { extractObjects } from './gateways.js';
import { describeFsError, type Input } from './input-files.js';
import { locateField } from './locate.js';
import type { CheckReport, CheckSettings, FileReport, GatewayReport, InputError } from './report.js';
import { decodeText, SourceText } from './source.js';

export interface CheckDeps {
  readonly ctx: RuleContext;
  readonly settings: CheckSettings;
  /** Looks up the allocated IPs the rules ask about (--from-cluster), then checks the input again. */
  readonly allocations?: AllocationPrefetch | undefined;
  /** Reads standard input (only called when `-` is an input). */
  readonly readStdin: () => Promise<Buffer>;
}

export async function checkInputs(inputs: readonly Input[], deps: CheckDeps): Promise<CheckReport> {
  const files: FileReport[] = [];
  for (const input of inputs) {
    if (input.kind === 'unreadable') {
      files.push(unreadable(input.display, input.message));
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = input.kind === 'stdin' ? await deps.readStdin() : readFileSync(input.path);
    } catch (err) {
      files.push(unreadable(input.display, describeFsError(err)));
      continue;
    }
    const source = new SourceText(input.display, decodeText(bytes));
    const check = (ctx: RuleContext): FileReport => checkSource(source, ctx);
    files.push(await (deps.allocations ? deps.allocations.decide(deps.ctx, check) : check(deps.ctx)));
  }
  return { settings: deps.settings, files };
}

function unreadable(path: string, message: string): FileReport {
  const error: InputError = {
    code: 'UnreadableInput',
    file: path,
    document: undefined,
    position: undefined,
    message,
  };
  return { path, read: false, gateways: [], errors: [error], skipped: 0, empty: 0 };
}

/** The parser reports some errors at the start of an indented line; point at its first character instead. */
function skipBlanks(text: string, offset: number): number {
  let i = offset;
  while (text[i] === ' ' || text[i] === '\t') i++;
  return text[i] === '\n' || text[i] === '\r' || i >= text.length ? offset : i;
}

function isEmptyDocument(contents: Node | null): boolean {
  return contents === null || (isScalar(contents) && contents.value === null);
}

/** Checks one input's text: every document in it, in order. */
export function checkSource(source: SourceText, ctx: RuleContext): FileReport {
  const gateways: GatewayReport[] = [];
  const errors: InputError[] = [];
  let skipped = 0;
  let empty = 0;
  const error = (code: InputError['code'], document: number, offset: number, message: string): void => {
    errors.push({ code, file: source.path, document, position: source.position(offset), message });
  };

  for (const parsed of readDocuments(source.text)) {
    if (parsed.error) {
      const offset = skipBlanks(source.text, parsed.error.offset);
      error('InvalidYAML', parsed.index, offset, `invalid YAML: ${parsed.error.message}`);
      continue;
    }
    const contents = parsed.contents;
    if (contents === null || isEmptyDocument(contents)) {
      empty++;
      continue;
    }
    for (const found of extractObjects(contents, parsed.doc)) {
      if (found.kind === 'other') {
        skipped++;
      } else if (found.kind === 'notObject') {
        const where =
          found.itemPath.length > 0
            ? `items[${found.itemPath.join('].items[')}] of document ${parsed.index}`
            : `document ${parsed.index}`;
        error(
          'NotAnObject',
          parsed.index,
          found.offset,
          `${where} is ${found.found}, not a Kubernetes object`,
        );
      } else {
        const start = found.node.range?.[0] ?? 0;
        try {
          gateways.push(checkGateway({ source, doc: parsed.doc, document: parsed.index }, found, ctx));
        } catch (err) {
          // toJS refuses alias bombs; anything else would be a bug, reported rather than thrown.
          error('CheckFailed', parsed.index, start, `could not check this Gateway: ${errorMessage(err)}`);
        }
      }
    }
  }
  return { path: source.path, read: true, gateways, errors, skipped, empty };
}

/** Where a Gateway was found: the input, its parsed YAML document and the document's number. */
interface GatewaySite {
  readonly source: SourceText;
  readonly doc: Document.Parsed;
  readonly document: number;
}

function checkGateway(
  { source, doc, document }: GatewaySite,
  {
    node,
    itemPath,
    apiVersion,
  }: { readonly node: Node; readonly itemPath: readonly number[]; readonly apiVersion: string },
  ctx: RuleContext,
): GatewayReport {
  const judged = evaluateGateway(node.toJS(doc), ctx, (field) => ({
    position: source.position(locateField(node, field.segments, doc)),
  }));
  return {
    file: source.path,
    document,
    itemPath,
    apiVersion,
    namespace: judged.namespace || undefined,
    name: judged.name || undefined,
    position: source.position(node.range?.[0] ?? 0),
    findings: judged.findings,
  };
}
