{{/*
ValidatingAdmissionPolicy mode (policy.enabled, docs/policy.md). The CEL is never written here: it is
the generator's (files/policy/<revision>.json, written by `npm run policy:chart` from src/policy).
These helpers only pick the rule units per action and fill in the names, the cluster domain and the
allow-list; test/chart/policy.test.ts holds the result equal to `routability-webhook policy`.
*/}}

{{/* Name prefix of the policies and bindings: <name>-deny, <name>-warn. */}}
{{- define "grw.policyName" -}}
{{- default (include "grw.fullname" .) .Values.policy.name }}
{{- end }}

{{/* The params ConfigMap (in the release namespace) the policies read the service ranges from. */}}
{{- define "grw.policyParamsName" -}}
{{- printf "%s-params" (include "grw.policyName" .) }}
{{- end }}

{{/*
The GEP-5093 revision the cluster's Gateway CRD carries, read with `lookup` as serve's
--gep-revision auto reads it (src/crd/gep-revision.ts, in brief): a spec routability schema with a
`pattern` is this project's crd-patch schema (provisional); one whose CEL rule admits "" first
(`size(self) == 0 || …`, upstream's) is experimental. Empty when it cannot be read: `helm template`,
`--dry-run=client` and Argo CD cannot look up, a CRD without the field, or another schema.
*/}}
{{- define "grw.crdRevision" -}}
{{- $crd := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "gateways.gateway.networking.k8s.io" }}
{{- if $crd }}
{{- range $v := (dig "spec" "versions" list $crd) }}
{{- if $v.storage }}
{{- $r := dig "schema" "openAPIV3Schema" "properties" "spec" "properties" "addresses" "items" "properties" "routability" dict $v }}
{{- if $r.pattern }}provisional
{{- else }}
{{- range $rule := (get $r "x-kubernetes-validations" | default list) }}
{{- if regexMatch "^\\s*(size\\(self\\)\\s*==\\s*0|self\\s*==\\s*'')\\s*\\|\\|" $rule.rule }}experimental{{ end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The GEP-5093 revision the policy enforces: policy.gepRevision, else a fixed webhook.gepRevision,
else the cluster's CRD (lookup), else provisional. A revision given by value that the CRD
contradicts is refused: that policy would refuse values the API server stores and the webhook admits.
*/}}
{{- define "grw.policyRevision" -}}
{{- $crd := include "grw.crdRevision" . }}
{{- $given := .Values.policy.gepRevision }}
{{- if and (not $given) (ne .Values.webhook.gepRevision "auto") }}{{ $given = .Values.webhook.gepRevision }}{{ end }}
{{- if and $given $crd (ne $given $crd) }}
{{- fail (printf "policy: the Gateway CRD carries the %s revision of routability, but the policy was asked for %s (policy.gepRevision or webhook.gepRevision): that policy would refuse values the webhook admits. Leave both unset (the policy then follows the CRD) or set %s" $crd $given $crd) }}
{{- end }}
{{- coalesce $given $crd "provisional" }}
{{- end }}

{{- define "grw.policySpecPolicy" -}}
{{- default .Values.webhook.specPolicy .Values.policy.specPolicy }}
{{- end }}

{{- define "grw.policyStatusPolicy" -}}
{{- default .Values.webhook.statusPolicy .Values.policy.statusPolicy }}
{{- end }}

{{/*
The generator's units for the revision, placeholders filled, as JSON text: the cluster domain lower
case without its trailing dot; the allow-list sorted, as a CEL list of single-quoted strings, and as
the catalogue quotes it in messages (inside a CEL string in messageExpression, plain in message).
*/}}
{{- define "grw.policyForm" -}}
{{- $text := .Files.Get (printf "files/policy/%s.json" (include "grw.policyRevision" .)) }}
{{- if not $text }}{{ fail (printf "files/policy/%s.json is missing from the chart" (include "grw.policyRevision" .)) }}{{ end }}
{{- $cel := list }}
{{- $quoted := list }}
{{- $plain := list }}
{{- range (.Values.webhook.allowedRoutabilities | uniq | sortAlpha) }}
{{- $cel = append $cel (printf "'%s'" (replace "'" "\\\\'" .)) }}
{{- $quoted = append $quoted (printf "\\\"%s\\\"" (replace "'" "\\\\'" .)) }}
{{- $plain = append $plain (printf "\\\"%s\\\"" .) }}
{{- end }}
{{- $text = replace "@@clusterDomain@@" (.Values.webhook.clusterDomain | lower | trimSuffix ".") $text }}
{{- $text = replace "@@allowedList@@" (printf "[%s]" (join ", " $cel)) $text }}
{{- $text = replace "@@allowedQuoted@@" (join ", " $quoted) $text }}
{{- $text = replace "@@allowedPlain@@" (join ", " $plain) $text }}
{{- $text }}
{{- end }}
