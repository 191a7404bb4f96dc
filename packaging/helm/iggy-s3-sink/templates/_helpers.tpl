{{/* SPDX-License-Identifier: Apache-2.0 */}}
{{- define "iggy-s3-sink.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "iggy-s3-sink.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "iggy-s3-sink.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "iggy-s3-sink.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "iggy-s3-sink.selectorLabels" -}}
app.kubernetes.io/name: {{ include "iggy-s3-sink.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "iggy-s3-sink.labels" -}}
{{ include "iggy-s3-sink.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "iggy-s3-sink.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "iggy-s3-sink.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: the ServiceAccount to run as (serviceAccount.create is false)" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* A size as the daemon's config writes it (N, N B, N KiB/MiB/GiB, N KB/MB/GB) in MiB, rounded up. */}}
{{- define "iggy-s3-sink.mib" -}}
{{- $s := toString . | trim -}}
{{- $m := regexFind "^[0-9]+" $s -}}
{{- if not $m -}}{{- fail (printf "size %q: write N, NKiB, NMiB, NGiB, NKB, NMB or NGB" $s) -}}{{- end -}}
{{- $n := int64 $m -}}
{{- $u := regexReplaceAll "^[0-9]+ *" $s "" -}}
{{- if eq $u "GiB" -}}{{- mul $n 1024 -}}
{{- else if eq $u "MiB" -}}{{- $n -}}
{{- else if eq $u "KiB" -}}{{- div (add $n 1023) 1024 -}}
{{- else if eq $u "GB" -}}{{- div (add (mul $n 1000000000) 1048575) 1048576 -}}
{{- else if eq $u "MB" -}}{{- div (add (mul $n 1000000) 1048575) 1048576 -}}
{{- else if eq $u "KB" -}}{{- div (add (mul $n 1000) 1048575) 1048576 -}}
{{- else if or (eq $u "") (eq $u "B") -}}{{- div (add $n 1048575) 1048576 -}}
{{- else -}}{{- fail (printf "size %q: write N, NKiB, NMiB, NGiB, NKB, NMB or NGB" $s) -}}
{{- end -}}
{{- end -}}

{{/* A duration as the daemon's config writes it (90s, 2m, 1m30s, 1h) in whole seconds, rounded up. */}}
{{- define "iggy-s3-sink.seconds" -}}
{{- $s := toString . | trim -}}
{{- if not (regexMatch "^([0-9]+(ms|s|m|h))+$" $s) -}}{{- fail (printf "duration %q: write e.g. 30s, 2m, 1m30s" $s) -}}{{- end -}}
{{- $ms := 0 -}}
{{- range regexFindAll "[0-9]+(ms|s|m|h)" $s -1 -}}
{{- $n := int64 (regexFind "^[0-9]+" .) -}}
{{- $u := regexReplaceAll "^[0-9]+" . "" -}}
{{- $ms = add $ms (mul $n (get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000) $u)) -}}
{{- end -}}
{{- div (add $ms 999) 1000 -}}
{{- end -}}

{{/*
The sizing formula (docs/operations.md "Sizing"): container memory =
memory.max_buffered + 2 x s3.part_size + 64 MiB (code, TLS and connection buffers,
per-partition bookkeeping, up to 16 MiB of poll-reply buffers; the two part buffers kept for
the next objects), in MiB. The daemon's defaults apply to keys the config leaves out.
*/}}
{{- define "iggy-s3-sink.memoryMiB" -}}
{{- $mem := .Values.config.memory | default dict -}}
{{- $s3 := .Values.config.s3 | default dict -}}
{{- $budget := include "iggy-s3-sink.mib" ($mem.max_buffered | default "256MiB") | int64 -}}
{{- $part := include "iggy-s3-sink.mib" ($s3.part_size | default "8MiB") | int64 -}}
{{- add $budget (mul 2 $part) 64 -}}
{{- end -}}

{{/* The spool emptyDir: memory.max_spool + the spare spool files (min(max_spool / 4, 256 MiB)), in MiB. */}}
{{- define "iggy-s3-sink.spoolMiB" -}}
{{- $mem := .Values.config.memory | default dict -}}
{{- $spool := include "iggy-s3-sink.mib" ($mem.max_spool | default "4GiB") | int64 -}}
{{- add $spool (min (div $spool 4) 256) -}}
{{- end -}}

{{/* A Kubernetes quantity in MiB (Mi) as a number of MiB. */}}
{{- define "iggy-s3-sink.quantityMiB" -}}
{{- $q := toString . -}}
{{- if hasSuffix "Gi" $q -}}{{- mul (int64 (trimSuffix "Gi" $q)) 1024 -}}
{{- else if hasSuffix "Mi" $q -}}{{- int64 (trimSuffix "Mi" $q) -}}
{{- else -}}{{- fail (printf "resources memory %q: write it in Mi or Gi" $q) -}}
{{- end -}}
{{- end -}}

{{/* The daemon's config: the values' config with admin.listen on every interface at adminPort. */}}
{{- define "iggy-s3-sink.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- $admin := get $cfg "admin" | default dict -}}
{{- $_ := set $admin "listen" (printf "0.0.0.0:%d" (int .Values.adminPort)) -}}
{{- $_ := set $cfg "admin" $admin -}}
{{- toYaml $cfg -}}
{{- end -}}
