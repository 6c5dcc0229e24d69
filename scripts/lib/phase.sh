# Wall time per phase, for .ci/run and scripts/test (sourced, not run).
#
#   phase NAME CMD...   runs CMD, prints "phase NAME: S s (exit N)", and logs it
#                       to $FUGUE_PHASE_LOG when that is set
#   phase_table         prints the phases logged so far as a Markdown table, in
#                       the order they started, a nested phase indented under
#                       the phase that ran it
#
# The log and the nesting depth travel in the environment, so a script that a
# phase runs adds its own phases beneath it. A failing phase is logged before
# its exit code is passed on: a run that fails still shows where its time went.
: "${FUGUE_PHASE_DEPTH:=0}"
export FUGUE_PHASE_DEPTH

phase() {
  local name=$1 start end seconds status=0
  shift
  start=$(date +%s.%N)
  FUGUE_PHASE_DEPTH=$((FUGUE_PHASE_DEPTH + 1)) "$@" || status=$?
  end=$(date +%s.%N)
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  echo "phase $name: ${seconds} s (exit $status)"
  if [ -n "${FUGUE_PHASE_LOG:-}" ]; then
    printf '%s\t%s\t%s\t%s\t%s\n' "$start" "$FUGUE_PHASE_DEPTH" "$name" "$seconds" "$status" >>"$FUGUE_PHASE_LOG"
  fi
  return "$status"
}

phase_table() {
  [ -n "${FUGUE_PHASE_LOG:-}" ] && [ -s "$FUGUE_PHASE_LOG" ] || return 0
  echo
  echo "| phase | seconds | exit |"
  echo "| --- | ---: | ---: |"
  sort -t$'\t' -k1,1n "$FUGUE_PHASE_LOG" | awk -F'\t' '{
    indent = ""; for (i = 0; i < $2; i++) indent = indent "· ";
    printf "| %s%s | %s | %s |\n", indent, $3, $4, $5 }'
}
