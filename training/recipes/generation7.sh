#!/bin/bash
# Generation 7 from generation 6, with the presets: two rounds of damped 2-ply labels
# (configs/refine/2ply-race-roll.toml, then configs/refine/2ply-main-roll.toml), then the gate.
#
#   training/recipes/generation7.sh [OUT]        (default OUT: runs/gen7-recipe)
#
# Seeds: round 1 race 2093, main 2094 (the presets'); round 2 race 2193, main 2194.  Each label
# folder resumes where it stopped when the script is run again; fits and gates are redone.  About
# 11 min of labels and fits on 2 idle cores, then 5 + 5 min of gates (BENCHMARKS.md, session 16).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/gen7-recipe}
PY=${PYTHON:-.venv/bin/python}
mkdir -p "$OUT"
stamp() { echo "$(date -u +%FT%T) $*" | tee -a "$OUT/times.log"; }
M=checkpoints/bgbot-gen6.pt
# label_and_fit NET PRESET MODEL CHUNKS SEED ROUND: damped 2-ply labels of MODEL's self-play, then the NET refit
label_and_fit() {
  stamp "round $6: $1 labels"
  $PY -m training.refine generate --config "configs/refine/$2.toml" --model "$3" \
    --out "$OUT/$1-r$6" --chunks "$4" --workers 2 --seed "$5"
  stamp "round $6: $1 fit"
  $PY -m training.refine fit --config "configs/refine/$2.toml" --init "$3" \
    --data "$OUT/$1-r$6" --net "$1" --out "$OUT/fit-$1-r$6"
}
for round in 1 2; do
  if [ "$round" = 1 ]; then RS=2093; MS=2094; else RS=2193; MS=2194; fi
  label_and_fit race 2ply-race-roll "$M" 40 $RS $round
  label_and_fit main 2ply-main-roll "$OUT/fit-race-r$round/refined.pt" 28 $MS $round
  M=$OUT/fit-main-r$round/refined.pt
done
stamp "gate against generation 6"
$PY -m training.gate "$M" --name gen7-recipe --parent checkpoints/bgbot-gen6.pt --games 40000 --seed 5 --workers 2 \
  --yardstick 10000 --record "$OUT/gates.jsonl"
stamp "duel against generation 7 (checkpoints/bgbot-gen7.pt)"
$PY -m training.gate "$M" --name gen7-recipe-vs-gen7 --parent checkpoints/bgbot-gen7.pt --games 40000 --seed 6 \
  --workers 2 --yardstick 0 --record "$OUT/gates.jsonl"
stamp "done: $M"
