#!/usr/bin/env bash
# Night-level quality over many nights (issue 3, item 6), in one command: for each seed from
# FIRST to LAST and each scene, a night synthesised from the held-out part of the data ('somni
# synth --split test', as in scripts/evaluate-default-model.sh), analysed without clips by the
# shipped model (or MODEL), and each scene's nights scored together by 'somni evaluate': a line
# per night, each figure's median and range with how many nights reach 0.8 and 0.9 (false
# events: 1 an hour), and the nights' counts pooled.
#
#   scripts/evaluate-nights.sh FIRST LAST
#   DATA=../shared/data MODEL=my.somnimodel SCENES="fan steady-fan" HOURS=8 WORK=/tmp/nights \
#     scripts/evaluate-nights.sh 4 36
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
scripts/build-release.sh --product somni >&2
SOMNI="$(scripts/build-release.sh --show-bin-path)/somni"
model=()
[ -n "${MODEL:-}" ] && model=(--model "$MODEL")
source scripts/scenes.sh
for scene in $SCENES; do
  scene_flags "$scene"
  pairs=()
  for ((seed = FIRST; seed <= LAST; seed++)); do
    night="$WORK/$scene-$seed"
    "$SOMNI" synth --out "$night.flac" --format flac --hours "$HOURS" --seed "$seed" --data "$DATA" --split test \
      "${SCENE_FLAGS[@]}" >/dev/null
    rm -rf "$night.night"
    "$SOMNI" analyze "$night.flac" --out "$night.night" --no-clips "${model[@]}" --json >/dev/null
    [ "${KEEP_AUDIO:-0}" = 1 ] || rm -f "$night.flac"
    pairs+=(--reference "$night.csv" "$night.night")
    echo "$scene night $seed analysed" >&2
  done
  echo "== $scene: seeds $FIRST-$LAST, $HOURS h each${MODEL:+, model $MODEL} =="
  "$SOMNI" evaluate "${pairs[@]}"
  echo
done
echo "Nights, references and results are in $WORK"
