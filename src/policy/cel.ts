/**
 * Small pieces of CEL text shared by the policy's expressions: literals, and
 * the catalogue's messages turned into `messageExpression` concatenations.
 * Pure: strings in, strings out.
 */
import { CATALOGUE, type RuleCode } from '../rules/index.js';

/** A single-quoted CEL string literal. */
export function celString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`;
}

/** A CEL list literal of strings (homogeneous, as the API server's type checker requires). */
export function celStringList(items: readonly string[]): string {
  return `[${items.map(celString).join(', ')}]`;
}

/** Marks where a CEL expression goes in a message rendered by the catalogue. */
export const token = (name: string) => `@@${name}@@`;
const TOKEN = /@@([A-Za-z]+)@@/g;

/**
 * Renders a catalogue message with tokens in place of the field and of the
 * parameters that vary, then turns it into a CEL concatenation in which each
 * token is replaced by its (string-valued) CEL expression. The catalogue stays
 * the one source of the wording.
 */
export function messageExpression(rendered: string, expressions: Readonly<Record<string, string>>): string {
  const parts: string[] = [];
  let last = 0;
  for (const match of rendered.matchAll(TOKEN)) {
    const name = match[1]!;
    const expression = expressions[name];
    if (expression === undefined) throw new Error(`no CEL expression for ${token(name)} in: ${rendered}`);
    if (match.index > last) parts.push(celString(rendered.slice(last, match.index)));
    parts.push(`(${expression})`);
    last = match.index + match[0].length;
  }
  if (last < rendered.length) parts.push(celString(rendered.slice(last)));
  return parts.join(' + ');
}

/** The catalogue's full field-error sentence for a code, with tokens for the field and parameters. */
export function renderMessage<C extends RuleCode>(
  code: C,
  field: string,
  params: Parameters<(typeof CATALOGUE)[C]['message']>[1],
): string {
  const entry = CATALOGUE[code] as { message: (field: string, p: unknown) => string };
  return entry.message(field, params);
}

/** A rendered message with every token replaced by a readable placeholder: the static `message` fallback. */
export function staticMessage(rendered: string, placeholders: Readonly<Record<string, string>>): string {
  return rendered.replace(TOKEN, (_, name: string) => placeholders[name] ?? '…');
}
