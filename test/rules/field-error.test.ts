/** Findings carry their Kubernetes field-error type; one renderer writes every message. */
import { describe, expect, it } from 'vitest';
import { CATALOGUE, RULE_CODES, readGateway, validateGateway } from '../../src/rules/index.js';
import { NO_VALUE, renderFieldErrorBody } from '../../src/rules/field-error.js';
import { baseGateway, context, create } from '../kit/gateways.js';

const TYPE_TEXT: Record<string, string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueRequired: 'Required value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
};

describe('field errors', () => {
  it('renders as Kubernetes does: value hidden for Required, Forbidden and Too long', () => {
    expect(renderFieldErrorBody({ type: 'FieldValueInvalid', value: '1.2.3.4', detail: 'bad' })).toBe(
      'Invalid value: "1.2.3.4": bad',
    );
    expect(renderFieldErrorBody({ type: 'FieldValueRequired', value: 'x', detail: 'needed' })).toBe(
      'Required value: needed',
    );
    expect(renderFieldErrorBody({ type: 'FieldValueTooLong', value: 'x', detail: 'at most 2' })).toBe(
      'Too long: at most 2',
    );
    expect(renderFieldErrorBody({ type: 'FieldValueInvalid', value: NO_VALUE, detail: 'd' })).toBe(
      'Invalid value: d',
    );
  });

  it.each(RULE_CODES)('%s: the example message starts with its declared type', (code) => {
    const entry = CATALOGUE[code];
    const params = entry.example.params as never;
    const parts = entry.parts(params);
    expect(entry.message(entry.example.field, params)).toMatch(
      new RegExp(`^${entry.example.field.replace(/[.[\]]/g, '\\$&')}: ${TYPE_TEXT[parts.type]}`),
    );
  });

  it('a finding carries its type and body; message = field + body', () => {
    const long = `example.com/${'a'.repeat(250)}`;
    const result = validateGateway(create(baseGateway({ spec: [{ routability: long }] })), context());
    const f = result.violations[0]!;
    expect(f.type).toBe('FieldValueTooLong');
    expect(f.message).toBe(`spec.addresses[0].routability: ${f.body}`);
    expect(f.body.startsWith('Too long: ')).toBe(true);
  });
});

describe('readGateway', () => {
  it('reads identity, entries with effective type, conditions, and never throws', () => {
    const view = readGateway(
      baseGateway({
        spec: [{ value: '10.96.0.1', routability: null }, 'junk' as never],
        status: [{ type: 'Hostname', value: 'a.example' }],
        conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
      }),
    );
    expect(view.namespace).toBe('apps');
    expect(view.spec.entries.map((e) => [e.type, e.value, e.routability])).toEqual([
      ['IPAddress', '10.96.0.1', undefined],
    ]);
    expect(view.spec.findings.map((f) => f.code)).toEqual(['AddressesMalformed']);
    expect(view.hasStatus).toBe(true);
    expect(view.status.entries[0]!.type).toBe('Hostname');
    expect(view.conditions[0]!.reason).toBe('Assigned');
    for (const odd of [undefined, null, 5, 'x', [], { spec: 5, status: [], metadata: [] }])
      expect(() => readGateway(odd)).not.toThrow();
  });
});
