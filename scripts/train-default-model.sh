#!/usr/bin/env bash
# Reproduces Sources/SomniCore/Resources/default.somnimodel and default-second.somnimodel from
# ../shared/data (see its README for the sources and their licences). Nothing is copied: the class
# folders are links into the data.
#
#   scripts/train-default-model.sh [DATA_DIR] [OUT_MODEL] [extra somni train options]
#
# The shipped default is two models of this recipe, seeds 2 and 3: default.somnimodel decides the
# windows it is sure of and default-second.somnimodel is asked about the rest (stop 32,
# docs/quality-log.md). Run without OUT_MODEL, the script writes both (about 8 minutes here).
# SEED=N trains the first from another seed, to see how much the figures move with the draw
# alone. FOLD=K (1–4; default 0, the shared rule) holds out another fifth of the data, training
# nights included, for cross-validating the recipe (scripts/cross-validate.sh). NAME="..." names a variant's model file (the extra options change the recipe, as
# --frame-ms 50 --mel-bands 64 --min-hz 30 did at stop 21).
# TRAINING_NIGHTS=N (default 6) adds N one-hour fan nights synthesised from the training split
# (seeds 2001…), every snore, word and cough marked, as --training-only examples: a fan and the
# room's sounds under and between the marked events, which the class folders alone never show
# (stops 22–24, docs/quality-log.md). TRAINING_NIGHTS=0 SEED=1 NAME="somni-cnn v2" gives the
# model shipped until stop 23. The narrow-band model, which 'somni analyze' uses for a recording made
# below 16 kHz, is this recipe with every training example cut off above a random 3.4–7 kHz:
#   NAME="somni-cnn v3 narrow-band" scripts/train-default-model.sh ../shared/data \
#     Sources/SomniCore/Resources/narrow-band.somnimodel --band-limit 1
#
# Classes: snoring (Khan's snoring clips), speech (Speech Commands words, a stand-in for
# sleep-talk), cough (CoughSeg coughs cut at their marked onsets/offsets), other (Khan's ten
# non-snoring categories, CoughSeg's no-cough recordings, the gaps between marked coughs and the
# Speech Commands noise recordings, 10 minutes of generated white/pink/brown/fan/rumble noise). The
# noise recordings and the generated noise are also mixed under every class at −3…25 dB SNR.
# Input: the log-mel and, as a second channel, each band above its 20th percentile in the window.
# Split: the shared held-out rule of ../shared/data (DataSplit: Khan indices 30–39 of each 50,
# one Speech Commands speaker / CoughSeg recording in five, the last 20 % of each noise
# recording) is the test split, so test nights from 'somni synth' hold nothing trained on; the rest
# is split 85/15 into training and validation by group (blocks of 10 Khan indices, speaker,
# recording). Test figures are printed at the end and written to default.report.json.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="$(cd "${1:-../shared/data}" && pwd)"
OUT="${2:-Sources/SomniCore/Resources/default.somnimodel}"
# Without OUT_MODEL the second model (seed 3) is trained too; SECOND_SEED=N trains one for a
# variant, SECOND_SEED= none.
if [ -z "${2:-}" ]; then SECOND_SEED="${SECOND_SEED-3}"; else SECOND_SEED="${SECOND_SEED:-}"; fi
# Another fold's models are not the shipped ones: they must not be written over them.
if [ "${FOLD:-0}" != 0 ] && [ "$(realpath -m "$OUT")" = "$(realpath -m Sources/SomniCore/Resources/default.somnimodel)" ]; then
  echo "scripts/train-default-model.sh: FOLD=$FOLD trains a cross-validation fold: give OUT_MODEL, not the shipped model's place" >&2
  exit 64
fi
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
source scripts/class-folders.sh
stage_class_folders "$DATA" "$STAGE/classes"
scripts/build-release.sh --product somni >&2
SOMNI="$(scripts/build-release.sh --show-bin-path)/somni"
TRAINING_NIGHTS="${TRAINING_NIGHTS:-6}"
NIGHTS=()
if [ "$TRAINING_NIGHTS" -gt 0 ]; then
  mkdir -p "$STAGE/nights/snoring/nights"
  for ((i = 1; i <= TRAINING_NIGHTS; i++)); do
    night="$STAGE/nights/snoring/nights/night-$((2000 + i))"
    "$SOMNI" synth --out "$night.flac" --format flac --hours 1 --seed $((2000 + i)) --scene fan \
      --data "$DATA" --split train --fold "${FOLD:-0}" >/dev/null
    # The reference's classes as the model's labels, one per line, so no event is taken for a gap.
    awk -F, 'NR > 1 { print $1 "\t" $2 "\t" ($3 == "sleep_talk" ? "speech" : $3) }' "$night.csv" > "$night.txt"
    rm "$night.csv"
  done
  NIGHTS=(--training-only "$STAGE/nights")
fi
EXTRA=("${@:3}")
# --threads 2, as the shipped models were trained: a model depends on the thread count (each
# thread's gradients are summed in a fixed order), so this pins it on machines with more cores.
train() {  # SEED NAME OUT_MODEL
  "$SOMNI" train "$STAGE/classes" --out "$3" "${NIGHTS[@]}" \
    --background "$DATA/noise" --synthetic-noise other --gaps-as other --group-block 10 --split shared-data --fold "${FOLD:-0}" --seed "$1" \
    --epochs 30 --patience 30 --examples-per-class 2000 --window-floor 0.2 --threads 2 --name "$2" "${EXTRA[@]}"
}
train "${SEED:-2}" "${NAME:-somni-cnn v3}" "$OUT"
if [ -n "$SECOND_SEED" ]; then
  train "$SECOND_SEED" "${NAME:-somni-cnn v3} seed $SECOND_SEED" "${OUT%.somnimodel}-second.somnimodel"
fi
