import { MAX_ADDRESSES } from '../rules/index.js';

/** The CRD's maxItems (the rules' MAX_ADDRESSES): the policy indexes entries with this literal list. */
export const INDEXES = `[${Array.from({ length: MAX_ADDRESSES }, (_, i) => String(i)).join(', ')}]`;
