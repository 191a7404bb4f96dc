# SPDX-License-Identifier: Apache-2.0
# Sourced by CLI tests that run commands under `env -i` (a clean environment): `san_env` holds
# the sanitizers' option variables of a scripts/sanitize run (ASAN_OPTIONS and the others), to
# be passed through as `env -i "${san_env[@]}" ...`. Without them a sanitized binary falls back
# to exit 1 and reports on stderr, which a test expecting exit 1 would take for a pass
# (docs/testing.md, Sanitizers). Empty outside a sanitizer run.
san_env=()
for _v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
  [[ -n "${!_v:-}" ]] && san_env+=("$_v=${!_v}")
done
unset _v
