{{/*
TLS material. Three modes (tls.mode):
  certManager    cert-manager issues the serving certificate; its cainjector fills caBundle on both
                 webhook configurations (annotation cert-manager.io/inject-ca-from).
  helm           the chart generates a CA and a serving certificate once and keeps them: on upgrade
                 it reads the existing Secret back with `lookup` and reuses it, until the certificate
                 is within tls.helm.renewBeforeDays of its expiry (recorded on the Secret): then it
                 renews both, with the previous CA kept in caBundle. `helm template` and
                 --dry-run=client cannot look up, so they always show fresh material (GitOps: use
                 certManager or existingSecret).
  existingSecret you manage the Secret; tls.existingSecret.caBundle is the CA that signed it.
*/}}

{{- define "grw.tls.secretName" -}}
{{- if eq .Values.tls.mode "existingSecret" -}}
{{- .Values.tls.existingSecret.name -}}
{{- else -}}
{{- default (printf "%s-tls" (include "grw.fullname" .)) .Values.tls.secretName -}}
{{- end -}}
{{- end }}

{{/*
helm mode: returns YAML {ca.crt, tls.crt, tls.key}, base64-encoded. Computed once per render and
cached in .Values, so the Secret and both webhook configurations carry the same CA even though
genCA is random.
*/}}
{{- define "grw.tls.helmMaterial" -}}
{{- if not .Values._grwHelmTLS -}}
{{- $secretName := include "grw.tls.secretName" . -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $secretName | default dict -}}
{{- $crt := dig "data" "tls.crt" "" $existing -}}
{{- $key := dig "data" "tls.key" "" $existing -}}
{{- $ca := dig "data" "ca.crt" "" $existing -}}
{{- $notAfter := dig "metadata" "annotations" "gateway-routability-webhook.io/not-after-unix" "" $existing -}}
{{- $renewBefore := int .Values.tls.helm.renewBeforeDays -}}
{{- $renewFrom := now | dateModify (printf "+%dh" (mul 24 $renewBefore)) | unixEpoch -}}
{{- $material := dict -}}
{{- if and $crt $key $ca $notAfter (gt (atoi $notAfter) (atoi $renewFrom)) -}}
{{- $material = dict "ca.crt" $ca "tls.crt" $crt "tls.key" $key "notAfter" $notAfter -}}
{{- else -}}
{{- /* First install, a partial Secret, a certificate within renewBeforeDays of expiry, or one from a
       chart that did not record its expiry: new CA and certificate. caBundle keeps the previous CA
       beside the new one, so replicas still serving the old certificate until the kubelet swaps the
       mounted Secret stay trusted: renewal needs no restart and causes no outage. */ -}}
{{- $svc := include "grw.serviceName" . -}}
{{- $newCA := genCA (printf "%s-ca" (include "grw.fullname" .)) (int .Values.tls.helm.caValidityDays) -}}
{{- $dnsNames := include "grw.dnsNames" . | fromYamlArray -}}
{{- $days := int .Values.tls.helm.certValidityDays -}}
{{- $cert := genSignedCert (printf "%s.%s.svc" $svc .Release.Namespace) nil $dnsNames $days $newCA -}}
{{- $bundle := $newCA.Cert -}}
{{- if and $crt $key $ca -}}
{{- $previous := regexFind "(?s)-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----" (b64dec $ca) -}}
{{- if $previous }}{{ $bundle = printf "%s\n%s\n" (trim $newCA.Cert) $previous }}{{ end -}}
{{- end -}}
{{- $until := now | dateModify (printf "+%dh" (mul 24 $days)) | unixEpoch -}}
{{- $material = dict "ca.crt" ($bundle | b64enc) "tls.crt" ($cert.Cert | b64enc) "tls.key" ($cert.Key | b64enc) "notAfter" (toString $until) -}}
{{- end -}}
{{- $_ := set .Values "_grwHelmTLS" $material -}}
{{- end -}}
{{- toYaml .Values._grwHelmTLS -}}
{{- end }}

{{/* caBundle for the webhook configurations (base64 PEM); empty in certManager mode. */}}
{{- define "grw.tls.caBundle" -}}
{{- include "grw.validate" . -}}
{{- if eq .Values.tls.mode "helm" -}}
{{- index (include "grw.tls.helmMaterial" . | fromYaml) "ca.crt" -}}
{{- else if eq .Values.tls.mode "existingSecret" -}}
{{- $raw := .Values.tls.existingSecret.caBundle | trim -}}
{{- $b64 := ternary ($raw | b64enc) ($raw | replace "\n" "" | replace " " "") (contains "BEGIN CERTIFICATE" $raw) -}}
{{- if not (contains "BEGIN CERTIFICATE" (b64dec $b64)) -}}
{{- fail "tls.existingSecret.caBundle must be a PEM certificate or base64-encoded PEM" -}}
{{- end -}}
{{- $b64 -}}
{{- end -}}
{{- end }}

{{/* Annotations on the webhook configurations (cert-manager CA injection). */}}
{{- define "grw.tls.configAnnotations" -}}
{{- if eq .Values.tls.mode "certManager" -}}
cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "grw.fullname" .) }}
{{- end -}}
{{- end }}
