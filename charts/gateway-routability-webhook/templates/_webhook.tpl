{{/* clientConfig for one webhook; $path is the URL path on the server. */}}
{{- define "grw.webhook.clientConfig" -}}
{{- $root := index . 0 -}}
{{- $path := index . 1 -}}
service:
  name: {{ include "grw.serviceName" $root }}
  namespace: {{ $root.Release.Namespace }}
  path: {{ $path }}
  port: 443
{{- with include "grw.tls.caBundle" $root }}
caBundle: {{ . }}
{{- end }}
{{- end }}

{{/*
namespaceSelector: kube-system and the release namespace are always excluded, so a broken webhook
can never block the namespace that holds its own recovery. Users add names and label requirements.
*/}}
{{- define "grw.webhook.namespaceSelector" -}}
{{- $excluded := concat (list "kube-system" .Release.Namespace) .Values.namespaceSelector.excludeNamespaces | uniq -}}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
      {{- toYaml $excluded | nindent 6 }}
  {{- with .Values.namespaceSelector.matchExpressions }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .Values.namespaceSelector.matchLabels }}
matchLabels:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
matchConditions (CEL; all must be true for the apiserver to call the webhook).

Two facts shape every expression:
  * `routability` exists on a Gateway only once the CRD is patched; before that the apiserver prunes
    it from every request. object/oldObject are untyped (dyn) in webhook matchConditions, so
    reading a missing key is an error ("no such key"), and an error here makes the apiserver apply
    failurePolicy - with Fail, the write is rejected. Hence every optional field is read only
    behind has(), which is false (never an error) for a missing key.
  * request.subResource is empty (and may be absent) for the main resource, so it is guarded too.

Only `object` is inspected. oldObject matters to the server solely for ratcheting entries that are
still present in object; if object has nothing to check, there is nothing to ratchet either.
*/}}
{{- define "grw.webhook.specMatchConditions" -}}
# Main resource (spec rules): only entries that name a routability are checked. (The status guard
# keeps the condition neutral for a status request, should the entry's rules ever list one.)
- name: spec-addresses-name-a-routability
  expression: >-
    (has(request.subResource) && request.subResource == 'status') ||
    (has(object.spec) && has(object.spec.addresses) &&
    object.spec.addresses.exists(a, has(a.routability)))
{{- end }}

{{- define "grw.webhook.statusMatchConditions" -}}
# Status subresource: every status address is checked (unset routability means External), as is
# the AddressesAssigned condition.
- name: status-has-addresses-or-assignment
  expression: >-
    !(has(request.subResource) && request.subResource == 'status') ||
    (has(object.status) && has(object.status.addresses) && size(object.status.addresses) > 0) ||
    (has(object.status) && has(object.status.conditions) &&
    object.status.conditions.exists(c, has(c.type) && c.type == 'AddressesAssigned'))
{{- end }}

{{- define "grw.webhook.mutatingMatchConditions" -}}
# Defaulting adds routability: External to status addresses without one; nothing else to do.
- name: status-address-lacks-routability
  expression: >-
    has(object.status) && has(object.status.addresses) &&
    object.status.addresses.exists(a, !has(a.routability))
{{- end }}


{{/*
failurePolicy of the status entries (validating and mutating): status writes are a failure domain of
their own. While webhook.statusPolicy is warn the webhook never refuses a status write, so an outage
must not either: Ignore, and Fail is refused. Under enforce the operator chooses:
validatingWebhook.statusFailurePolicy, else validatingWebhook.failurePolicy (mutating: its own value).
*/}}
{{- define "grw.webhook.statusFailurePolicy" -}}
{{- $set := .Values.validatingWebhook.statusFailurePolicy -}}
{{- if eq .Values.webhook.statusPolicy "warn" -}}
{{- if eq $set "Fail" }}{{ fail "validatingWebhook.statusFailurePolicy=Fail with webhook.statusPolicy=warn: the webhook never refuses a status write under warn, so an outage must not refuse one either. Leave it empty (Ignore), or set webhook.statusPolicy=enforce" }}{{ end -}}
Ignore
{{- else -}}
{{- default .Values.validatingWebhook.failurePolicy $set -}}
{{- end -}}
{{- end }}

{{- define "grw.webhook.mutatingFailurePolicy" -}}
{{- if and (eq .Values.webhook.statusPolicy "warn") (eq .Values.mutatingWebhook.failurePolicy "Fail") -}}
{{- fail "mutatingWebhook.failurePolicy=Fail with webhook.statusPolicy=warn would refuse status writes while the webhook is down, which the webhook itself never refuses under warn: use Ignore (the default), or set webhook.statusPolicy=enforce" -}}
{{- end -}}
{{- .Values.mutatingWebhook.failurePolicy -}}
{{- end }}
