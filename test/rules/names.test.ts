/**
 * Kubernetes name syntax, written once in src/rules/names.ts: labels (namespaces), subdomains
 * (object names, routability prefixes) and the domain-prefixed routability the flags accept.
 */
import { describe, expect, it } from 'vitest';
import {
  DOMAIN_PREFIXED,
  isDns1123Label,
  isDns1123Subdomain,
  ROUTABILITY_PATTERN,
} from '../../src/rules/index.js';

describe('DNS-1123 names', () => {
  it.each([
    { text: 'a', label: true, subdomain: true },
    { text: 'kube-system', label: true, subdomain: true },
    { text: '0abc9', label: true, subdomain: true },
    { text: 'a'.repeat(63), label: true, subdomain: true },
    { text: 'a'.repeat(64), label: false, subdomain: true },
    { text: 'a.b', label: false, subdomain: true },
    { text: `${'a'.repeat(63)}.${'b'.repeat(189)}`, label: false, subdomain: true },
    { text: `${'a'.repeat(63)}.${'b'.repeat(190)}`, label: false, subdomain: false },
    { text: '', label: false, subdomain: false },
    { text: 'A', label: false, subdomain: false },
    { text: '-a', label: false, subdomain: false },
    { text: 'a-', label: false, subdomain: false },
    { text: 'a..b', label: false, subdomain: false },
    { text: 'a.-b', label: false, subdomain: false },
    { text: '.a', label: false, subdomain: false },
    { text: 'a.', label: false, subdomain: false },
    { text: 'a_b', label: false, subdomain: false },
    { text: 'a\nb', label: false, subdomain: false },
  ])('$text: label $label, subdomain $subdomain', ({ text, label, subdomain }) => {
    expect(isDns1123Label(text)).toBe(label);
    expect(isDns1123Subdomain(text)).toBe(subdomain);
  });

  it.each([
    { text: 'example.com/CorpWan', prefixed: true },
    { text: 'a/b:c~d%20', prefixed: true },
    { text: 'example.com/', prefixed: false },
    { text: '/x', prefixed: false },
    { text: 'Example.com/x', prefixed: false },
    { text: 'example.com/a b', prefixed: false },
    { text: 'External', prefixed: false },
  ])('domain-prefixed $text: $prefixed, and the routability pattern agrees', ({ text, prefixed }) => {
    expect(DOMAIN_PREFIXED.test(text)).toBe(prefixed);
    if (text !== 'External') expect(new RegExp(ROUTABILITY_PATTERN).test(text)).toBe(prefixed);
  });
});
