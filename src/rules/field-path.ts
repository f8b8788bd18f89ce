/**
 * A path to a field of an object, rendered two ways from one value:
 * the Kubernetes field-error form (`spec.addresses[0].value`) used in messages
 * and `details.causes[].field`, and the RFC 6901 JSON Pointer form
 * (`/spec/addresses/0/value`) used in JSON Patch operations.
 */
export class FieldPath {
  private constructor(readonly segments: readonly (string | number)[]) {}

  static root(...segments: (string | number)[]): FieldPath {
    return new FieldPath(segments);
  }

  child(name: string): FieldPath {
    return new FieldPath([...this.segments, name]);
  }

  index(i: number): FieldPath {
    return new FieldPath([...this.segments, i]);
  }

  /** `spec.addresses[0].value`, as Kubernetes' field.Path.String() renders it. */
  toString(): string {
    let out = '';
    for (const segment of this.segments) {
      if (typeof segment === 'number') out += `[${segment}]`;
      else out += out === '' ? segment : `.${segment}`;
    }
    return out;
  }

  /** `/spec/addresses/0/value`, escaping `~` and `/` as RFC 6901 requires. */
  toPointer(): string {
    // Built by concatenation: every patched status write renders one path per address.
    let out = '';
    for (const segment of this.segments)
      out += typeof segment === 'number' ? `/${segment}` : `/${pointerToken(segment)}`;
    return out;
  }

  /** `spec.addresses[1].value` → `spec.addresses[1]`: the list entry a field belongs to. */
  upToFirstIndex(): FieldPath {
    const cut = this.segments.findIndex((s) => typeof s === 'number');
    return cut < 0 ? this : new FieldPath(this.segments.slice(0, cut + 1));
  }
}

/** One RFC 6901 reference token; a name with neither `~` nor `/` (every field name) as it is. */
function pointerToken(name: string): string {
  if (!name.includes('~') && !name.includes('/')) return name;
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}
