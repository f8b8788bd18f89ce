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

{{/* The GEP-5093 revision the policy enforces: policy.gepRevision, else a fixed webhook.gepRevision, else provisional. */}}
{{- define "grw.policyRevision" -}}
{{- if .Values.policy.gepRevision }}{{ .Values.policy.gepRevision }}
{{- else if ne .Values.webhook.gepRevision "auto" }}{{ .Values.webhook.gepRevision }}
{{- else }}provisional{{- end }}
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
