/**
 * Kubernetes field errors (k8s.io/apimachinery's `field.Error`): a type, the
 * offending value and a detail, rendered as `<field>: <Type>: <value>: <detail>`.
 * Every message of the catalogue goes through `renderFieldErrorBody`, so the
 * wording of the type and the quoting of the value live in one place, and the
 * type travels with the finding into `details.causes[].reason`.
 */
import { jsonText } from './json-text.js';

/** `field.ErrorType` values used here; each is also a `metav1.CauseType`. */
export type ErrorType =
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueRequired'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany';

/** How Kubernetes prints each type (`field.ErrorType.String()`). */
const TYPE_TEXT: Readonly<Record<ErrorType, string>> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueRequired: 'Required value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
};

/** Types whose rendering never shows the value, as in Kubernetes' `ErrorBody()`. */
const VALUE_HIDDEN: ReadonlySet<ErrorType> = new Set([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
]);

/** Marks a field error that has no value to show. */
export const NO_VALUE: unique symbol = Symbol('no value');

/** Go's %q for strings, JSON for everything else, capped so a hostile value cannot flood a message. */
export function quote(value: unknown, max = 256): string {
  let text: string;
  if (typeof value === 'string')
    text = JSON.stringify(value.length > max ? `${value.slice(0, max)}...` : value);
  else if (value === undefined) text = 'null';
  else {
    text = jsonText(value, max);
    if (text.length > max) text = `${text.slice(0, max)}...`;
  }
  return text;
}

export interface FieldErrorParts {
  readonly type: ErrorType;
  /** The offending value, or NO_VALUE. */
  readonly value: unknown;
  readonly detail: string;
  /** Longest value text shown (default 256 characters). */
  readonly valueMax?: number | undefined;
}

/** `Invalid value: "10.0.0.5": detail`: the part after `<field>: `, as `ErrorBody()` renders it. */
export function renderFieldErrorBody(parts: FieldErrorParts): string {
  let body = TYPE_TEXT[parts.type];
  if (parts.value !== NO_VALUE && !VALUE_HIDDEN.has(parts.type))
    body += `: ${quote(parts.value, parts.valueMax)}`;
  if (parts.detail !== '') body += `: ${parts.detail}`;
  return body;
}
