#!/bin/bash
# Generation 9 from generation 8, with the presets: generation 8's main network refitted to one round of the
# pit loop's labels (its damped 2-ply self-play labels and rollouts of its 1-ply games against gnubg 0-ply,
# as training/recipes/pit_round.sh makes them) plus 2-ply values of the six best plays of rolls of its
# self-play, stored by roll, with the sibling loss (configs/refine/2ply-rank.toml: fit --rank 1), then the gate.
#
#   training/recipes/generation9.sh [GEN8] [OUT]   (defaults: checkpoints/bgbot-gen8.pt, runs/gen9-recipe)
#
# The pit-loop labels are session 18's round "g10" (seeds 306, 3104, 2706); the sibling labels are seed 3401.
# Needs gnubg (/usr/games/gnubg) for the games.  Label folders resume where they stopped when the script is
# run again; the pit, the fits and the gate are redone.  87 min on 2 cores, timed as one run in session 23
# (BENCHMARKS.md): the pit-loop round 48 min, sibling labels 35 min, fit 3 min; the gate 20-25 min more.  That
# run gave generation 9's weights bit for bit (benchmarks/same_weights.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
G8=${1:-checkpoints/bgbot-gen8.pt}
OUT=${2:-runs/gen9-recipe}
PY=${PYTHON:-.venv/bin/python}
BGBOT=${BGBOT:-.venv/bin/bgbot}
mkdir -p "$OUT"
stamp() { echo "$(date -u +%FT%T) $*" | tee -a "$OUT/times.log"; }
stamp "one round of the pit loop's labels from generation 8 (its own fit is not used)"
PYTHON=$PY BGBOT=$BGBOT training/recipes/pit_round.sh "$G8" "$OUT/round" 306 3104 2706
stamp "2-ply values of the six best plays of a roll, by roll"
$PY -m training.refine generate --workers 2 --config configs/refine/2ply-rank.toml --model "$G8" --out "$OUT/rank" \
  --chunks 240 --seed 3401
stamp "fit with the sibling loss"
$PY -m training.refine fit --config configs/refine/2ply-rank.toml --init "$G8" --net main --out "$OUT/fit" \
  --data "$OUT/round/roll" "$OUT/round/ro-pit" "$OUT/rank"
stamp "gate against generation 8"
$PY -m training.gate "$OUT/fit/refined.pt" --name gen9-recipe --parent "$G8" --games 200000 --seed 11 \
  --workers 2 --yardstick 10000 --record "$OUT/gates.jsonl"
stamp "done: $OUT/fit/refined.pt"
