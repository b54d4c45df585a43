#!/usr/bin/env bash
# Cross-validates the default model's recipe (scripts/train-default-model.sh) on ../shared/data:
# for each fold of the held-out rule (DataSplit; fold 0 is the shared rule the shipped models
# were trained with, folds 1–4 hold out each other fifth in turn), both models of the recipe are
# trained with that fold held out, training nights included; then every fold's held-out windows
# are classified by that fold's models and scored together (scripts/evaluate-held-out-windows.sh
# --fold 0,1,2,3,4). Every clip, speaker, cough recording and fifth of noise is held out once, so
# the figures stand on about five times as many windows as the shipped models' own test split:
# they measure the recipe, of which the shipped models are one draw, not those models alone.
#
#   scripts/cross-validate.sh [DATA_DIR] [WORK_DIR]
#
# About 10 minutes a fold here, 50 for all five (both models; FOLDS="0 2" trains only those). The models stay in
# WORK_DIR (default: a new temporary folder) as fold-K.somnimodel and fold-K-second.somnimodel;
# a fold whose two models are already there is not trained again, so a second run only scores.
# Fold 0 reproduces the shipped models bit for bit; the script says whether it did.
# RECIPE_OPTIONS="..." adds 'somni train' options to every model, to cross-validate a variant of
# the recipe (RECIPE_OPTIONS="--gain-db=-32:6 --channels 24,48,96,128"); fold 0 is then not
# expected to give the shipped models.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="$(cd "${1:-../shared/data}" && pwd)"
WORK="${2:-$(mktemp -d)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
FOLDS="${FOLDS:-0 1 2 3 4}"
read -r -a recipe <<< "${RECIPE_OPTIONS:-}"
for fold in $FOLDS; do
  model="$WORK/fold-$fold.somnimodel"
  if [ -f "$model" ] && [ -f "${model%.somnimodel}-second.somnimodel" ]; then
    echo "== Fold $fold: models already in $WORK" >&2
    continue
  fi
  echo "== Fold $fold: training both models of the recipe with fold $fold held out" >&2
  # Fold 0 keeps the shipped models' names, so that it can reproduce them.
  name="somni-cnn v3"; [ "$fold" = 0 ] || name="somni-cnn v3 fold $fold"
  FOLD="$fold" SECOND_SEED=3 NAME="$name" scripts/train-default-model.sh "$DATA" "$model" "${recipe[@]}" >&2
done
if [[ " $FOLDS " == *" 0 "* ]]; then
  if cmp -s "$WORK/fold-0.somnimodel" Sources/SomniCore/Resources/default.somnimodel &&
    cmp -s "$WORK/fold-0-second.somnimodel" Sources/SomniCore/Resources/default-second.somnimodel; then
    echo "== Fold 0 reproduced the shipped models bit for bit" >&2
  else
    echo "== Fold 0's models differ from the shipped ones (another recipe, thread count or code)" >&2
  fi
fi
scripts/evaluate-held-out-windows.sh "$DATA" --fold "$(echo $FOLDS | tr ' ' ,)" \
  --model "$WORK/fold-{fold}.somnimodel" --model "$WORK/fold-{fold}-second.somnimodel" "${@:3}"
