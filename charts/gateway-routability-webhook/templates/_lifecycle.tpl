{{/*
Lifecycle hooks: `verify` (helm test, and optionally post-install/post-upgrade) and the pre-delete
hook that removes the admission objects first. Both run the product binary with its own minimal
RBAC, named <fullname>-verify and <fullname>-disarm and labelled app.kubernetes.io/component, and
created as hook resources so that they exist only around the hook.
*/}}

{{/* The Pod spec shared by the helm test Pod and the verify hook Job; .root is the chart context. */}}
{{- define "grw.hookPodSpec" -}}
serviceAccountName: {{ .name }}
automountServiceAccountToken: true
restartPolicy: Never
{{- with .root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .root.Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
containers:
  - name: {{ .container }}
    image: {{ include "grw.image" .root }}
    imagePullPolicy: {{ .root.Values.image.pullPolicy }}
    # The image's entrypoint is the binary itself: no shell is needed (or present).
    args:
      {{- toYaml .args | nindent 6 }}
    resources:
      {{- toYaml .resources | nindent 6 }}
    securityContext:
      {{- toYaml .root.Values.securityContext | nindent 6 }}
    volumeMounts:
      - name: tmp
        mountPath: /tmp
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: 16Mi
{{- end }}

{{/* True when both lists warn: policy.yaml then renders no -deny policy or binding. */}}
{{- define "grw.policyWarnOnly" -}}
{{- if and (eq (include "grw.policySpecPolicy" .) "warn") (eq (include "grw.policyStatusPolicy" .) "warn") }}true{{ end }}
{{- end }}

{{/* The policy bindings verify and disarm name, as policy.yaml renders them: -deny unless both lists warn; -warn when a list is under warn. */}}
{{- define "grw.policyBindingNames" -}}
{{- if .Values.policy.enabled }}
{{- $name := include "grw.policyName" . }}
{{- if not (include "grw.policyWarnOnly" .) }}
- {{ printf "%s-deny" $name }}
{{- end }}
{{- if or (eq (include "grw.policySpecPolicy" .) "warn") (eq (include "grw.policyStatusPolicy" .) "warn") }}
- {{ printf "%s-warn" $name }}
{{- end }}
{{- end }}
{{- end }}

{{/* verify's arguments, from the values the webhook runs with. */}}
{{- define "grw.verifyArgs" -}}
- verify
- --namespace={{ .Values.verify.namespace }}
{{- if .Values.webhook.enabled }}
- --webhook-name={{ .Values.validatingWebhook.name }}
- --spec-policy={{ .Values.webhook.specPolicy }}
{{- else }}
- --no-webhook
- --spec-policy={{ include "grw.policySpecPolicy" . }}
{{- end }}
{{- if .Values.policy.enabled }}
- --policy-binding={{ printf "%s-%s" (include "grw.policyName" .) (ternary "warn" "deny" (eq (include "grw.policyWarnOnly" .) "true")) }}
{{- end }}
{{- end }}
