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
for round in 1 2; do
  if [ "$round" = 1 ]; then RS=2093; MS=2094; else RS=2193; MS=2194; fi
  stamp "round $round: race labels"
  $PY -m training.refine generate --config configs/refine/2ply-race-roll.toml --model "$M" \
    --out "$OUT/race-r$round" --chunks 40 --workers 2 --seed $RS
  stamp "round $round: race fit"
  $PY -m training.refine fit --config configs/refine/2ply-race-roll.toml --init "$M" \
    --data "$OUT/race-r$round" --net race --out "$OUT/fit-race-r$round"
  stamp "round $round: main labels"
  $PY -m training.refine generate --config configs/refine/2ply-main-roll.toml --model "$OUT/fit-race-r$round/refined.pt" \
    --out "$OUT/main-r$round" --chunks 28 --workers 2 --seed $MS
  stamp "round $round: main fit"
  $PY -m training.refine fit --config configs/refine/2ply-main-roll.toml --init "$OUT/fit-race-r$round/refined.pt" \
    --data "$OUT/main-r$round" --net main --out "$OUT/fit-main-r$round"
  M=$OUT/fit-main-r$round/refined.pt
done
stamp "gate against generation 6"
$PY -m training.gate "$M" --name gen7-recipe --parent checkpoints/bgbot-gen6.pt --games 40000 --seed 5 --workers 2 \
  --yardstick 10000 --record "$OUT/gates.jsonl"
stamp "duel against the shipped generation 7"
$PY -m training.gate "$M" --name gen7-recipe-vs-gen7 --parent checkpoints/bgbot-default.pt --games 40000 --seed 6 \
  --workers 2 --yardstick 0 --record "$OUT/gates.jsonl"
stamp "done: $M"
