#!/usr/bin/env bash
# Issue 3's window-level figures for a classifier, on the part of ../shared/data the recipe holds
# out (the shared rule, DataSplit: Khan indices 30–39 of each 50, one Speech Commands speaker and
# CoughSeg recording in five, the last 20 % of each noise recording):
#   1. every held-out window of the recipe's class folders (scripts/train-default-model.sh, without
#      its synthesised nights and generated noise, which are not recordings of the data set):
#      accuracy, each class's precision and recall (cough and speech: targets 0.95);
#   2. Khan's clips alone: snoring against the rest (target 0.99).
# Each figure comes with its 95 % interval. Nothing is copied: the class folders are links.
#
#   scripts/evaluate-held-out-windows.sh [DATA_DIR] [--model MODEL ...] [--json]
#
# Without --model it scores the classifier shipped with Somni (both models, the second asked
# about the windows the first is unsure of), as 'somni analyze' uses it. With --fold 0,1,2,3,4
# and --model paths holding {fold}, each fold's held-out windows are classified by its own models
# and all are scored together (scripts/cross-validate.sh); fold 4 holds none of Khan's clips.
set -euo pipefail
cd "$(dirname "$0")/.."
# DATA_DIR is optional: a first argument that is an option belongs to somni classify.
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then DATA_ARG="$1"; shift; else DATA_ARG=../shared/data; fi
DATA="$(cd "$DATA_ARG" && pwd)"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
source scripts/class-folders.sh
stage_class_folders "$DATA" "$STAGE/all"
mkdir -p "$STAGE"/khan/{snoring,other}
ln -s "$DATA/snoring-khan/snoring" "$STAGE/khan/snoring/khan"
ln -s "$DATA/snoring-khan/no_snoring" "$STAGE/khan/other/khan-no-snoring"
scripts/build-release.sh --product somni >&2
SOMNI="$(scripts/build-release.sh --show-bin-path)/somni"
# The headings go to standard error, so that with --json standard output is the two documents.
echo "== Every held-out window (cough and speech precision / recall: targets 0.95)" >&2
"$SOMNI" classify "$STAGE/all" --split shared-data "$@"
echo >&2
echo "== Khan's held-out clips: snoring against the rest (target 0.99)" >&2
"$SOMNI" classify "$STAGE/khan" --split shared-data "$@"
