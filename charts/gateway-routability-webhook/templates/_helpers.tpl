{{/* Chart name, cut to 63 characters (DNS label). */}}
{{- define "grw.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<chart> unless the release name already contains the chart name. */}}
{{- define "grw.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "grw.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "grw.selectorLabels" -}}
app.kubernetes.io/name: {{ include "grw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "grw.labels" -}}
helm.sh/chart: {{ include "grw.chart" . }}
{{ include "grw.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gateway-routability-webhook
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "grw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "grw.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Service the apiserver calls; also the base of the certificate's DNS names. */}}
{{- define "grw.serviceName" -}}
{{- include "grw.fullname" . }}
{{- end }}

{{- define "grw.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "grw.validatingConfigurationName" -}}
{{- default (include "grw.fullname" .) .Values.validatingWebhook.configurationName }}
{{- end }}

{{- define "grw.mutatingConfigurationName" -}}
{{- default (include "grw.fullname" .) .Values.mutatingWebhook.configurationName }}
{{- end }}

{{/*
Does the server talk to the apiserver? It watches ServiceCIDRs when no --service-cidr is given and
lists IPAddresses when the allocated-IP check is on. Otherwise it needs no token and no RBAC.
*/}}
{{- define "grw.usesCluster" -}}
{{- if or (empty .Values.webhook.serviceCIDRs) .Values.webhook.checkAllocatedIPs (include "grw.audits" .) (eq .Values.webhook.gepRevision "auto") }}true{{- end }}
{{- end }}

{{/* "true" when the background audit is on (webhook.audit.interval other than "0"). */}}
{{- define "grw.audits" -}}
{{- if ne (toString .Values.webhook.audit.interval) "0" }}true{{- end }}
{{- end }}

{{/* The GEP-5093 revision whose schema the crd-patch hook Job adds. */}}
{{- define "grw.crdPatchRevision" -}}
{{- if .Values.crdPatch.gepRevision }}{{ .Values.crdPatch.gepRevision }}
{{- else if ne .Values.webhook.gepRevision "auto" }}{{ .Values.webhook.gepRevision }}
{{- else }}provisional{{- end }}
{{- end }}

{{/* The report resource the audit writes ("group plural"), empty when it writes none or does not audit. */}}
{{- define "grw.auditReports" -}}
{{- if include "grw.audits" . }}
{{- if eq .Values.webhook.audit.reports "policyreport" }}wgpolicyk8s.io policyreports
{{- else if eq .Values.webhook.audit.reports "openreports" }}openreports.io reports
{{- end }}
{{- end }}
{{- end }}

{{/* The DNS names the apiserver may check on the serving certificate. */}}
{{- define "grw.dnsNames" -}}
{{- $svc := include "grw.serviceName" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .Values.webhook.clusterDomain) | toYaml }}
{{- end }}

{{/* Chart-wide checks that the schema cannot express. Included from the Deployment. */}}
{{- define "grw.validate" -}}
{{- $grace := int .Values.lifecycle.terminationGracePeriodSeconds -}}
{{- $need := add (int .Values.lifecycle.preStopSleepSeconds) (int .Values.webhook.shutdownTimeoutSeconds) -}}
{{- if lt $grace (int $need) -}}
{{- fail (printf "lifecycle.terminationGracePeriodSeconds (%d) must be at least lifecycle.preStopSleepSeconds + webhook.shutdownTimeoutSeconds (%d), or the kubelet kills the server before in-flight reviews finish" $grace (int $need)) -}}
{{- end -}}
{{- if and (eq .Values.tls.mode "existingSecret") (empty .Values.tls.existingSecret.name) -}}
{{- fail "tls.mode=existingSecret needs tls.existingSecret.name" -}}
{{- end -}}
{{- if and (eq .Values.tls.mode "existingSecret") (empty .Values.tls.existingSecret.caBundle) -}}
{{- fail "tls.mode=existingSecret needs tls.existingSecret.caBundle (the CA that signed the serving certificate)" -}}
{{- end -}}
{{- if eq (int .Values.webhook.port) (int .Values.webhook.healthPort) -}}
{{- fail "webhook.port and webhook.healthPort must differ" -}}
{{- end -}}
{{- end }}

{{/*
Values an upgrade with --reuse-values lacks. Helm then renders these templates with the installed
release's values alone (its chart's values.yaml and what the user set), not merged with this chart's
values.yaml, so a value added since is missing (a nil map, an empty flag). Every template includes
"grw.defaults" first: it adds each missing key, at any depth, from files/values-defaults.yaml (this
values.yaml without comments, written by scripts/chart-values-history.mjs) and leaves every key that
is there alone, false and empty included (sprig's merge would replace those).
*/}}
{{- define "grw.defaults" -}}
{{- include "grw.fillMissing" (list .Values (.Files.Get "files/values-defaults.yaml" | fromYaml)) -}}
{{- end }}

{{- define "grw.fillMissing" -}}
{{- $dst := index . 0 -}}
{{- range $key, $value := index . 1 -}}
{{- if not (hasKey $dst $key) -}}
{{- $_ := set $dst $key (deepCopy $value) -}}
{{- else if and (kindIs "map" $value) (kindIs "map" (index $dst $key)) -}}
{{- include "grw.fillMissing" (list (index $dst $key) $value) -}}
{{- end -}}
{{- end -}}
{{- end }}
