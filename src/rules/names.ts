/**
 * Kubernetes name syntax (apimachinery's IsDNS1123Label and IsDNS1123Subdomain), written once:
 * the rules, the flags that take object names, the CRD patch and the generated policy all use
 * these, as a RegExp or, where CEL or OpenAPI needs a string, as the source text.
 */

/** One DNS-1123 label, unanchored: lower-case alphanumerics and '-', alphanumeric at both ends. */
export const DNS1123_LABEL_SOURCE = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
/** Dot-separated labels, unanchored (no per-label length cap, like upstream's CEL format). */
export const DNS1123_SUBDOMAIN_SOURCE = `${DNS1123_LABEL_SOURCE}(\\.${DNS1123_LABEL_SOURCE})*`;
/** The characters allowed after the slash of a domain-prefixed routability (`example.com/Path`). */
export const DOMAIN_PREFIXED_PATH_SOURCE = "[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+";

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

const LABEL = new RegExp(`^${DNS1123_LABEL_SOURCE}$`);
const SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_SOURCE}$`);
/** A DNS-1123 subdomain, a slash and path characters: the syntax of a domain-prefixed routability. */
export const DOMAIN_PREFIXED = new RegExp(`^${DNS1123_SUBDOMAIN_SOURCE}\\/${DOMAIN_PREFIXED_PATH_SOURCE}$`);

/** A namespace name, for example: 1 to 63 characters of one label. */
export function isDns1123Label(text: string): boolean {
  return text.length <= DNS1123_LABEL_MAX_LENGTH && LABEL.test(text);
}

/** An object name, for example: 1 to 253 characters of dot-separated labels. */
export function isDns1123Subdomain(text: string): boolean {
  return text.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && SUBDOMAIN.test(text);
}
