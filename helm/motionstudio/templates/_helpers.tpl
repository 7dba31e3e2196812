{{/* motionstudio.name is the chart name, or nameOverride. */}}
{{- define "motionstudio.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* motionstudio.fullname is the prefix of every resource name. */}}
{{- define "motionstudio.fullname" -}}
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

{{/*
motionstudio.component is the name of one service's resources.
Call with (dict "root" $ "key" "identity").
*/}}
{{- define "motionstudio.component" -}}
{{- printf "%s-%s" (include "motionstudio.fullname" .root | trunc 50 | trimSuffix "-") .key }}
{{- end }}

{{/* motionstudio.selectorLabels selects one service's pods. Call with (dict "root" $ "key" "identity"). */}}
{{- define "motionstudio.selectorLabels" -}}
app.kubernetes.io/name: {{ include "motionstudio.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .key }}
{{- end }}

{{/* motionstudio.labels are set on every object of one service. Call with (dict "root" $ "key" "identity"). */}}
{{- define "motionstudio.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "motionstudio.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: motionstudio
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/* motionstudio.image is a service's image reference. Call with (dict "root" $ "svc" $svc). */}}
{{- define "motionstudio.image" -}}
{{- $reg := .root.Values.image.registry | trimSuffix "/" }}
{{- $repo := .svc.image.repository }}
{{- if $reg }}{{ $repo = printf "%s/%s" $reg $repo }}{{ end }}
{{- $tag := .svc.image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion }}
{{- printf "%s:%s" $repo $tag }}
{{- end }}

{{/* motionstudio.secretName is the Secret a service reads its secret env from. */}}
{{- define "motionstudio.secretName" -}}
{{- .svc.existingSecret | default (include "motionstudio.component" .) }}
{{- end }}

{{/*
motionstudio.generatedKeys lists, per service, the secret keys the chart generates when left empty,
as "KEY=bytes" where bytes is the length of the random value before base64.
*/}}
{{- define "motionstudio.generatedKeys" -}}
{{- $keys := dict "identity" (list "SIGNING_KEY" "ENCRYPTION_KEY") "content" (list "ENCRYPTION_KEY") "agentteam" (list "ENCRYPTION_KEY" "SKILLS_ADMIN_KEY") }}
{{- get $keys .key | join "," }}
{{- end }}

{{/*
motionstudio.devKey is a development key derived from devSecretSeed, the release, namespace,
Secret and key names, the same on every render. SKILLS_ADMIN_KEY is 64 hex characters; the other
keys are base64 of 32 bytes (42 hex digits are valid base64 digits, "A=" pads to exactly 32 bytes).
It is only for development; production names an existingSecret (values.schema.json requires it).
Call with (dict "root" $ "name" $secretName "key" "SIGNING_KEY").
*/}}
{{- define "motionstudio.devKey" -}}
{{- $r := .root }}
{{- $sum := printf "%s/%s/%s/%s/%s" $r.Values.devSecretSeed $r.Release.Namespace $r.Release.Name .name .key | sha256sum }}
{{- if eq .key "SKILLS_ADMIN_KEY" }}{{ $sum }}{{ else }}{{ printf "%sA=" (trunc 42 $sum) }}{{ end }}
{{- end }}

{{/* motionstudio.containerSecurityContext locks every container down. */}}
{{- define "motionstudio.containerSecurityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: {{ .Values.readOnlyRootFilesystem }}
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
GOMEMLIMIT for a container memory limit given in Mi or Gi: 85 % of it, so that what the runtime
holds beside the heap (stacks, spans, freed pages not yet returned) stays under the limit. At
1,000,001 templates content-svc's RSS peaks 27-34 MiB above a GOMEMLIMIT of 216 MiB (make
bench-1m, docs/adr/0051-benchmarks.md); a GOMEMLIMIT equal to the limit lets the heap grow until
the container is killed.
*/}}
{{- define "motionstudio.goMemLimit" -}}
{{- $m := toString . -}}
{{- if hasSuffix "Gi" $m -}}
{{- div (mul (trimSuffix "Gi" $m | atoi) 1024 85) 100 }}MiB
{{- else if hasSuffix "Mi" $m -}}
{{- div (mul (trimSuffix "Mi" $m | atoi) 85) 100 }}MiB
{{- else -}}
{{- fail (printf "resources.limits.memory %q: give it in Mi or Gi" $m) -}}
{{- end -}}
{{- end -}}
