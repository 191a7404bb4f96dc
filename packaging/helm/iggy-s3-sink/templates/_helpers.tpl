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

{{/*
A scalar of the config as text. YAML numbers reach a template as float64 (Helm reads values
through JSON): an integral one is written back as its digits (1048576, not 1.048576e+06).
*/}}
{{- define "iggy-s3-sink.text" -}}
{{- if or (kindIs "float64" .) (kindIs "float32" .) -}}
{{- if eq (floor .) (float64 .) -}}{{- printf "%.0f" (float64 .) -}}{{- else -}}{{- toString . -}}{{- end -}}
{{- else -}}{{- toString . | trim -}}{{- end -}}
{{- end -}}

{{/* Decimal digits as an int64 (no octal reading of a leading 0, underscores dropped). */}}
{{- define "iggy-s3-sink.digits" -}}
{{- $d := regexReplaceAll "^0+" (replace "_" "" .) "" -}}
{{- if eq $d "" -}}0{{- else -}}{{- $d -}}{{- end -}}
{{- end -}}

{{/* 2^n, 5^n: (list BASE N) -> BASE^N. */}}
{{- define "iggy-s3-sink.pow" -}}
{{- $r := 1 -}}
{{- range until (index . 1 | int) -}}{{- $r = mul $r (index $ 0) -}}{{- end -}}
{{- $r -}}
{{- end -}}

{{/*
A size in bytes, read with the daemon's grammar (lib/config/values.cpp parse_size): digits
(underscores allowed) with an optional fraction, optional blanks, then a unit, case-insensitive:
none, B or bytes; KB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024). The
result must be a whole number of bytes (1.5GiB yes, 0.1KiB no). K, M, G, Ki ... are ambiguous and
refused, as the daemon refuses them. (dict "key" PATH "value" V) -> bytes as decimal digits.
*/}}
{{- define "iggy-s3-sink.bytes" -}}
{{- $key := .key -}}
{{- $s := include "iggy-s3-sink.text" .value -}}
{{- if contains "${" $s -}}{{- fail (printf "%s: %q is read from the environment in the pod, but the chart needs the size itself to size the pod: write it in the values" $key $s) -}}{{- end -}}
{{- $m := regexFindAll "^([0-9_]*)(\\.([0-9]*))?[ \t]*([A-Za-z]*)$" $s 1 -}}
{{- if or (not $m) (not (regexMatch "[0-9]" (regexReplaceAll "[ \t]*[A-Za-z]*$" $s ""))) -}}
{{- fail (printf "%s: %q is not a size (write e.g. 8MiB, 8MB, 1.5GiB or a number of bytes)" $key $s) -}}
{{- end -}}
{{- $whole := regexReplaceAll "^([0-9_]*).*$" $s "${1}" -}}
{{- $frac := "" -}}
{{- if contains "." $s -}}{{- $frac = regexReplaceAll "^[0-9_]*\\.([0-9]*).*$" $s "${1}" | trimSuffix "0" -}}{{- end -}}
{{- range until 20 -}}{{- $frac = trimSuffix "0" $frac -}}{{- end -}}
{{- $unit := regexReplaceAll "^[0-9_.]*[ \t]*" $s "" | lower -}}
{{- $units := dict "" (list 0 0) "b" (list 0 0) "bytes" (list 0 0) "kb" (list 3 3) "mb" (list 6 6) "gb" (list 9 9) "tb" (list 12 12) "kib" (list 10 0) "mib" (list 20 0) "gib" (list 30 0) "tib" (list 40 0) -}}
{{- if has $unit (list "k" "m" "g" "t" "ki" "mi" "gi" "ti") -}}
{{- fail (printf "%s: %q: the unit is ambiguous; write %siB (powers of 1024) or %sB (powers of 1000)" $key $s (upper (substr 0 1 $unit)) (upper (substr 0 1 $unit))) -}}
{{- end -}}
{{- if not (hasKey $units $unit) -}}
{{- fail (printf "%s: %q has an unknown unit (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)" $key $s) -}}
{{- end -}}
{{- $p := index (get $units $unit) 0 | int -}}
{{- $q := index (get $units $unit) 1 | int -}}
{{- $mult := mul (include "iggy-s3-sink.pow" (list 2 $p) | int64) (include "iggy-s3-sink.pow" (list 5 $q) | int64) -}}
{{- $w := include "iggy-s3-sink.digits" $whole -}}
{{- if or (gt (len $w) 18) (gt (int64 $w) (div 9000000000000000000 $mult)) -}}{{- fail (printf "%s: %q is too large" $key $s) -}}{{- end -}}
{{- $bytes := mul (int64 $w) $mult -}}
{{- $n := len $frac -}}
{{- if gt $n 12 -}}{{- fail (printf "%s: %q: write at most 12 decimals" $key $s) -}}{{- end -}}
{{- if gt $n 0 -}}
{{- /* frac x mult / 10^n, exactly: 10^n = 2^n x 5^n against mult = 2^p x 5^q */ -}}
{{- $x := int64 (include "iggy-s3-sink.digits" $frac) -}}
{{- if ge $q $n -}}{{- $x = mul $x (include "iggy-s3-sink.pow" (list 5 (sub $q $n)) | int64) -}}
{{- else -}}
{{- $d := include "iggy-s3-sink.pow" (list 5 (sub $n $q)) | int64 -}}
{{- if ne (mod $x $d) 0 -}}{{- fail (printf "%s: %q is not a whole number of bytes" $key $s) -}}{{- end -}}
{{- $x = div $x $d -}}
{{- end -}}
{{- if ge $p $n -}}{{- $x = mul $x (include "iggy-s3-sink.pow" (list 2 (sub $p $n)) | int64) -}}
{{- else -}}
{{- $d := include "iggy-s3-sink.pow" (list 2 (sub $n $p)) | int64 -}}
{{- if ne (mod $x $d) 0 -}}{{- fail (printf "%s: %q is not a whole number of bytes" $key $s) -}}{{- end -}}
{{- $x = div $x $d -}}
{{- end -}}
{{- $bytes = add $bytes $x -}}
{{- end -}}
{{- $bytes -}}
{{- end -}}

{{/* A size (as iggy-s3-sink.bytes: (dict "key" PATH "value" V)) in MiB, rounded up. */}}
{{- define "iggy-s3-sink.mib" -}}
{{- div (add (include "iggy-s3-sink.bytes" . | int64) 1048575) 1048576 -}}
{{- end -}}

{{/*
A duration in whole seconds, rounded up, read with the daemon's grammar (lib/config/values.cpp
parse_duration): one or more NUMBER UNIT (blanks allowed between them), the number with an
optional fraction, the unit one of us, ms, s, sec, m, min, h, hr, d (case-sensitive: M and Y
are not units), e.g. 90s, 1.5m, 1h30m, 250ms; a bare 0 is 0. The whole must be a number of
milliseconds. (dict "key" PATH "value" V).
*/}}
{{- define "iggy-s3-sink.seconds" -}}
{{- $key := .key -}}
{{- $s := include "iggy-s3-sink.text" .value -}}
{{- if contains "${" $s -}}{{- fail (printf "%s: %q is read from the environment in the pod, but the chart needs the duration itself: write it in the values" $key $s) -}}{{- end -}}
{{- $us := 0 -}}
{{- if regexMatch "^[0-9_]+$" $s -}}
{{- if ne (include "iggy-s3-sink.digits" $s) "0" -}}{{- fail (printf "%s: %q needs a unit: %ss, %sms, %sm ... (units: ms, s, m, h, d)" $key $s $s $s $s) -}}{{- end -}}
{{- else -}}
{{- if not (regexMatch "^( *([0-9_]+(\\.[0-9]*)?|\\.[0-9]+)[A-Za-z]+ *)+$" $s) -}}
{{- fail (printf "%s: %q is not a duration (write e.g. 250ms, 10s, 1.5m, 1h30m, 1d)" $key $s) -}}
{{- end -}}
{{- $units := dict "us" 1 "ms" 1000 "s" 1000000 "sec" 1000000 "m" 60000000 "min" 60000000 "h" 3600000000 "hr" 3600000000 "d" 86400000000 -}}
{{- range regexFindAll "([0-9_]*(\\.[0-9]*)?)[A-Za-z]+" $s -1 -}}
{{- $u := regexReplaceAll "^[0-9_.]*" . "" -}}
{{- if not (hasKey $units $u) -}}{{- fail (printf "%s: %q has an unknown unit %q (units: ms, s, m, h, d; M and Y are not allowed)" $key $s $u) -}}{{- end -}}
{{- $mult := get $units $u | int64 -}}
{{- $num := regexReplaceAll "[A-Za-z]+$" . "" -}}
{{- $w := include "iggy-s3-sink.digits" (regexReplaceAll "\\..*$" $num "") -}}
{{- if gt (len $w) 12 -}}{{- fail (printf "%s: %q is too large" $key $s) -}}{{- end -}}
{{- $us = add $us (mul (int64 $w) $mult) -}}
{{- if contains "." $num -}}
{{- $f := regexReplaceAll "^[^.]*\\." $num "" -}}
{{- range until 20 -}}{{- $f = trimSuffix "0" $f -}}{{- end -}}
{{- if gt (len $f) 8 -}}{{- fail (printf "%s: %q: write at most 8 decimals" $key $s) -}}{{- end -}}
{{- if $f -}}
{{- $us = add $us (div (mul (int64 (include "iggy-s3-sink.digits" $f)) $mult) (include "iggy-s3-sink.pow" (list 10 (len $f)) | int64)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if ne (mod $us 1000) 0 -}}{{- fail (printf "%s: %q: the smallest step is 1ms" $key $s) -}}{{- end -}}
{{- end -}}
{{- div (add $us 999999) 1000000 -}}
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
{{- $given := hasKey $mem "max_buffered" | ternary $mem.max_buffered "256MiB" -}}
{{- if lt (include "iggy-s3-sink.bytes" (dict "key" "config.memory.max_buffered" "value" $given) | int64) 1048576 -}}
{{- fail (printf "config.memory.max_buffered: must be >= 1MiB (a poll batch and one object's buffer), not %q: the daemon refuses it (lib/config/validate.cpp)" (include "iggy-s3-sink.text" $given)) -}}
{{- end -}}
{{- $budget := include "iggy-s3-sink.mib" (dict "key" "config.memory.max_buffered" "value" (hasKey $mem "max_buffered" | ternary $mem.max_buffered "256MiB")) | int64 -}}
{{- $part := include "iggy-s3-sink.mib" (dict "key" "config.s3.part_size" "value" (hasKey $s3 "part_size" | ternary $s3.part_size "8MiB")) | int64 -}}
{{- add $budget (mul 2 $part) 64 -}}
{{- end -}}

{{/*
The spool formula (docs/operations.md "Sizing"): memory.max_spool + min(memory.max_spool / 4,
256 MiB) (the spare spool files), in bytes, rounded up to whole MiB. memory.max_spool 0 means
"never spool" (objects close at s3.part_size): the formula gives 0 and the volume (still
TMPDIR) gets 1 MiB, since a sizeLimit of 0 would mean no limit to the kubelet.
*/}}
{{- define "iggy-s3-sink.spoolMiB" -}}
{{- $mem := .Values.config.memory | default dict -}}
{{- $spool := include "iggy-s3-sink.bytes" (dict "key" "config.memory.max_spool" "value" (hasKey $mem "max_spool" | ternary $mem.max_spool "4GiB")) | int64 -}}
{{- $total := add $spool (min (div (add $spool 3) 4) 268435456) -}}
{{- max 1 (div (add $total 1048575) 1048576) -}}
{{- end -}}

{{/*
A Kubernetes quantity (resources memory, an emptyDir sizeLimit: 512Mi, 1.5Gi, 1G, 500M,
1048576) in MiB, rounded up. (dict "key" PATH "value" Q).
*/}}
{{- define "iggy-s3-sink.quantityMiB" -}}
{{- $q := include "iggy-s3-sink.text" .value -}}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$" $q) -}}
{{- fail (printf "%s %q: write a Kubernetes quantity such as 512Mi, 2Gi or 1G" .key $q) -}}
{{- end -}}
{{- $u := regexReplaceAll "^[0-9.]+" $q "" -}}
{{- $mult := get (dict "" 1.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "P" 1000000000000000.0) $u -}}
{{- ceil (divf (mulf (float64 (regexReplaceAll "[A-Za-z]+$" $q "")) $mult) 1048576.0) | int64 -}}
{{- end -}}

{{/*
The daemon's config: the values' config with admin.listen on every interface at adminPort.
iggy.token and iggy.password are exclusive (the daemon refuses both): with a token, the chart's
default `password: ${IGGY_PASSWORD}` (which Helm merges into the user's iggy section) is
dropped; a password of the user's own beside a token is refused here.
*/}}
{{- define "iggy-s3-sink.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- $iggy := get $cfg "iggy" | default dict -}}
{{- if and (get $iggy "token") (get $iggy "password") -}}
{{- if eq (include "iggy-s3-sink.text" (get $iggy "password")) "${IGGY_PASSWORD}" -}}
{{- $_ := unset $iggy "password" -}}
{{- else -}}
{{- fail "config.iggy.token and config.iggy.password are both set, and the daemon accepts only one login: remove one (config.iggy.password: null to log in with the token)" -}}
{{- end -}}
{{- end -}}
{{- $admin := get $cfg "admin" | default dict -}}
{{- $_ := set $admin "listen" (printf "0.0.0.0:%d" (int .Values.adminPort)) -}}
{{- $_ := set $cfg "admin" $admin -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
Values the chart refuses before rendering, each with what to do instead: settings the daemon
would accept but that break in a cluster.
*/}}
{{- define "iggy-s3-sink.validate" -}}
{{- $iggy := .Values.config.iggy | default dict -}}
{{- if and (get $iggy "consumer") (not (get $iggy "consumer_group")) (gt (int .Values.replicaCount) 1) -}}
{{- fail (printf "replicaCount %d with config.iggy.consumer %q (single-consumer mode, consumer_group null): every replica would read every partition and write the same offsets again; set replicaCount: 1, or use config.iggy.consumer_group to split the partitions among the replicas" (int .Values.replicaCount) (toString (get $iggy "consumer"))) -}}
{{- end -}}
{{- $memory := .Values.config.memory | default dict -}}
{{- $spoolDir := toString (get $memory "spool_dir" | default "") | trimSuffix "/" -}}
{{- if and $spoolDir (ne $spoolDir "/var/spool/iggy-s3-sink") -}}
{{- fail (printf "config.memory.spool_dir %q is outside the spool volume: the chart mounts the spool emptyDir (sized by spool.sizeLimit) at /var/spool/iggy-s3-sink and sets TMPDIR to it, and the root filesystem is read-only, so the daemon could not spool there; remove memory.spool_dir (the daemon then uses TMPDIR) or set it to /var/spool/iggy-s3-sink" $spoolDir) -}}
{{- end -}}
{{- if and .Values.aws.irsaRoleArn (not .Values.serviceAccount.create) -}}
{{- fail (printf "aws.irsaRoleArn is set but serviceAccount.create is false: the chart annotates only a ServiceAccount it creates; annotate the existing service account %q instead (kubectl annotate serviceaccount %s eks.amazonaws.com/role-arn=%s) and leave aws.irsaRoleArn empty" (toString .Values.serviceAccount.name) (toString .Values.serviceAccount.name) .Values.aws.irsaRoleArn) -}}
{{- end -}}
{{- end -}}
