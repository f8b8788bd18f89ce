/**
 * The CEL text pieces of src/policy/cel.ts, each evaluated by the Kubernetes
 * CEL environment of test/kit/kube-cel.ts: a string literal is read back as
 * the text it was made of (backslash, quote, newline, carriage return), a
 * list literal as its items, and a message turned into a concatenation reads
 * as the catalogue renders it, whatever the tokens' places. No catalogue
 * message today has a quote, backslash or line break, so the equality tests
 * never reach these escapes.
 */
import { describe, expect, it } from 'vitest';
import { celString, celStringList, messageExpression, staticMessage, token } from '../../src/policy/cel.js';
import { evalKubeCel, plain } from '../kit/kube-cel.js';

const value = (expression: string, bindings: Record<string, unknown> = {}) => {
  const out = evalKubeCel(expression, bindings);
  if (!out.ok) throw new Error(`${expression}: ${out.error}`);
  return plain(out.value);
};

describe('celString and celStringList', () => {
  it.each([
    ['plain', 'abc'],
    ['a quote', "it's"],
    ['a backslash', 'a\\b'],
    ['a backslash before a quote', "a\\'b"],
    ['a newline', 'a\nb'],
    ['a carriage return', 'a\r\nb'],
    ['several of each', "''\\\\\n\n\r\r"],
    ['empty', ''],
  ])('%s reads back as itself', (_, text) => {
    const literal = celString(text);
    expect(literal.startsWith("'") && literal.endsWith("'")).toBe(true);
    expect(literal).not.toMatch(/[\n\r]/);
    expect(value(literal)).toBe(text);
  });

  it('a list literal reads back as its items, separated by ", "', () => {
    expect(celStringList(['a', "b'c", 'd\ne'])).toBe("['a', 'b\\'c', 'd\\ne']");
    expect(value(celStringList(['a', "b'c", 'd\ne']))).toEqual(['a', "b'c", 'd\ne']);
    expect(celStringList([])).toBe('[]');
  });
});

describe('messageExpression and staticMessage', () => {
  const expressions = { field: "'spec.addresses[0]'", value: 'v', n: 'string(size(l))' };
  const bindings = { v: '10.0.0.1', l: [1, 2, 3] };

  it.each([
    ['tokens in the middle', `${token('field')}: Invalid value: ${token('value')}: bad`],
    ['a token first and last', `${token('value')} and ${token('n')}`],
    ['tokens side by side', `${token('value')}${token('n')}`],
    ['no token', "it's fixed\ntext"],
    ['one token alone', token('n')],
  ])('%s: reads as the rendered message with each token replaced', (_, rendered) => {
    const expected = rendered
      .replaceAll(token('field'), 'spec.addresses[0]')
      .replaceAll(token('value'), '10.0.0.1')
      .replaceAll(token('n'), '3');
    expect(value(messageExpression(rendered, expressions), bindings)).toBe(expected);
  });

  it('no empty literal between or around tokens', () => {
    expect(messageExpression(`${token('value')}${token('n')}`, expressions)).toBe('(v) + (string(size(l)))');
    expect(messageExpression(`a${token('value')}b`, expressions)).toBe("'a' + (v) + 'b'");
    expect(messageExpression('', expressions)).toBe('');
  });

  it('a token without an expression is an error naming it and the message', () => {
    expect(() => messageExpression(`x ${token('nope')} y`, expressions)).toThrow(
      'no CEL expression for @@nope@@ in: x @@nope@@ y',
    );
  });

  it('staticMessage puts the placeholders in, and … where there is none', () => {
    expect(
      staticMessage(`${token('field')}: ${token('value')} (${token('n')})`, { field: 'f', value: 'x' }),
    ).toBe('f: x (…)');
    expect(staticMessage('no @@ token @@here', {})).toBe('no @@ token @@here');
  });
});
