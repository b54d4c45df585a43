#!/usr/bin/env bash
# Night-level quality over many nights (issue 3, item 6), in one command: for each seed from
# FIRST to LAST and each scene, a night synthesised from the held-out part of the data ('somni
# synth --split test', as in scripts/evaluate-default-model.sh), analysed without clips by the
# shipped classifier (or MODEL), and each scene's nights scored together by 'somni evaluate': a
# line per night, each figure's median and range with how many nights reach 0.8 and 0.9 (false
# events: 1 an hour), and the nights' counts pooled.
#
#   scripts/evaluate-nights.sh FIRST LAST
#   DATA=../shared/data MODEL=my.somnimodel SCENES="fan steady-fan" HOURS=8 WORK=/tmp/nights \
#     scripts/evaluate-nights.sh 4 36
#
# MODEL may name several model files, separated by commas: the first decides the windows it is
# sure of and the others give second opinions ('somni analyze --model A --model B'). With
# COMPARE_MODEL (the same form; "shipped" for the shipped classifier) each night is analysed a
# second time, from the same audio, and each scene is scored for both, so two classifiers are
# compared on identical nights:
#   COMPARE_MODEL=Sources/SomniCore/Resources/default.somnimodel scripts/evaluate-nights.sh 57 64
#
# FOLD=K (1–4) makes the nights from what fold K of the held-out rule holds out, for the models of
# a cross-validation (scripts/cross-validate.sh): MODEL=cv/fold-K.somnimodel,cv/fold-K-second.somnimodel.
# Fold 4 holds out no Khan snores, so it makes no nights.
#
# Scenes: quiet, fan, steady-fan, noise-only (scripts/scenes.sh says what each is). An 8-hour
# night takes about a minute to make and analyse here; its audio (about 0.5 GB of FLAC) is
# deleted once analysed unless KEEP_AUDIO=1. References and night folders stay in WORK.
set -euo pipefail
cd "$(dirname "$0")/.."
FIRST="${1:?usage: scripts/evaluate-nights.sh FIRST LAST}"
LAST="${2:?usage: scripts/evaluate-nights.sh FIRST LAST}"
DATA="$(cd "${DATA:-../shared/data}" && pwd)"
SCENES="${SCENES:-quiet fan steady-fan noise-only}"
HOURS="${HOURS:-8}"
WORK="${WORK:-$(mktemp -d)}"
mkdir -p "$WORK"
if [ "${FOLD:-0}" != 0 ] && { [ -z "${MODEL:-}" ] || [ "${MODEL:-}" = shipped ] || [ "${COMPARE_MODEL:-}" = shipped ]; }; then
  echo "scripts/evaluate-nights.sh: the shipped models trained on what fold $FOLD holds out: give MODEL (and COMPARE_MODEL) that fold's models" >&2
  exit 64
fi
scripts/build-release.sh --product somni >&2
SOMNI="$(scripts/build-release.sh --show-bin-path)/somni"
# model_flags SPEC: sets MODEL_FLAGS to one --model per comma-separated file (none for "" or "shipped").
model_flags() {
  MODEL_FLAGS=()
  if [ -z "$1" ] || [ "$1" = shipped ]; then return 0; fi
  local files file
  IFS=, read -r -a files <<< "$1"
  for file in "${files[@]}"; do MODEL_FLAGS+=(--model "$file"); done
}
model_flags "${MODEL:-}"; model=("${MODEL_FLAGS[@]}")
compare=()
if [ -n "${COMPARE_MODEL:-}" ]; then model_flags "$COMPARE_MODEL"; compare=("${MODEL_FLAGS[@]}"); fi
source scripts/scenes.sh
for scene in $SCENES; do
  scene_flags "$scene"
  pairs=() compared=()
  for ((seed = FIRST; seed <= LAST; seed++)); do
    night="$WORK/$scene-$seed"
    "$SOMNI" synth --out "$night.flac" --format flac --hours "$HOURS" --seed "$seed" --data "$DATA" --split test --fold "${FOLD:-0}" \
      "${SCENE_FLAGS[@]}" >/dev/null
    rm -rf "$night.night"
    "$SOMNI" analyze "$night.flac" --out "$night.night" --no-clips "${model[@]}" --json >/dev/null
    pairs+=(--reference "$night.csv" "$night.night")
    if [ -n "${COMPARE_MODEL:-}" ]; then
      rm -rf "$night.compared.night"
      "$SOMNI" analyze "$night.flac" --out "$night.compared.night" --no-clips "${compare[@]}" --json >/dev/null
      compared+=(--reference "$night.csv" "$night.compared.night")
    fi
    [ "${KEEP_AUDIO:-0}" = 1 ] || rm -f "$night.flac"
    echo "$scene night $seed analysed" >&2
  done
  echo "== $scene: seeds $FIRST-$LAST, $HOURS h each, model ${MODEL:-shipped} =="
  "$SOMNI" evaluate "${pairs[@]}"
  echo
  if [ -n "${COMPARE_MODEL:-}" ]; then
    echo "== $scene: seeds $FIRST-$LAST, $HOURS h each, model $COMPARE_MODEL (the same nights) =="
    "$SOMNI" evaluate "${compared[@]}"
    echo
  fi
done
echo "Nights, references and results are in $WORK"
