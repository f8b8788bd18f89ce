/** The CRD's maxItems: the policy indexes entries with this literal list. */
export const MAX_ADDRESSES = 16;
export const INDEXES = `[${Array.from({ length: MAX_ADDRESSES }, (_, i) => String(i)).join(', ')}]`;
