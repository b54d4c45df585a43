#!/usr/bin/env bash
# Night-level figures of the learned classifier against the heuristic baseline (issue 3, item 6):
# synthesised nights built only from the held-out part of ../shared/data ('somni synth --split
# test', the same rule 'somni train --split shared-data' keeps out of training), analysed with
# each classifier and scored with 'somni evaluate''s default protocol, with recall by level
# (each reference's rise over its background) beside the scores.
#
#   scripts/evaluate-default-model.sh [DATA_DIR] [MODEL]
#   HOURS=8 SEED=1 WORK=/tmp/somni-eval scripts/evaluate-default-model.sh
#
# Nights: a quiet bedroom; a bedroom with a fan, where the noise recordings (a cat, dishes, white
# and pink noise) also take turns under the night at the fan's level; the same with one steady
# fan alone ('steady-fan', 'somni synth --no-recorded-bed'); and a street-side night of
# background and bedroom sounds alone (no snoring, talk or coughs: every event found there is a
# false one).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="$(cd "${1:-../shared/data}" && pwd)"
MODEL="${2:-}"
HOURS="${HOURS:-8}"
SEED="${SEED:-1}"
WORK="${WORK:-$(mktemp -d)}"
mkdir -p "$WORK"
scripts/build-release.sh --product somni >&2
SOMNI="$(scripts/build-release.sh --show-bin-path)/somni"
source scripts/scenes.sh
for night in quiet fan steady-fan noise-only; do
  scene_flags "$night"
  "$SOMNI" synth --out "$WORK/$night.flac" --format flac --hours "$HOURS" --seed "$SEED" \
    --data "$DATA" --split test "${SCENE_FLAGS[@]}" >&2
  for classifier in heuristic model; do
    extra=()
    [ "$classifier" = model ] && [ -n "$MODEL" ] && extra=(--model "$MODEL")
    rm -rf "$WORK/$night-$classifier.night"
    start=$(date +%s)
    "$SOMNI" analyze "$WORK/$night.flac" --out "$WORK/$night-$classifier.night" --classifier "$classifier" \
      "${extra[@]}" --json > /dev/null
    echo "== $night night ($HOURS h, seed $SEED), $classifier classifier, analysed in $(( $(date +%s) - start )) s =="
    "$SOMNI" evaluate --reference "$WORK/$night.csv" "$WORK/$night-$classifier.night" --audio "$WORK/$night.flac"
  done
done
echo "Nights and results are in $WORK"
