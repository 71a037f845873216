#!/bin/bash
# Generation 8 from generation 7, with the presets: two refits of the main network to rollout labels of
# positions self-play does not reach (holding positions; positions of 1-ply games against gnubg 0-ply)
# mixed with damped 2-ply self-play labels, then the gate.
#
#   training/recipes/generation8.sh [OUT]        (default OUT: runs/gen8-recipe)
#
# Step 1 (candidate "pit-a", kept as checkpoints/bgbot-gen7-pit.pt): generation 7's damped 2-ply labels
# (seed 2196), rollout labels of holding positions of exploring self-play (seeds 2601, 2602) and of the
# positions of generation 7's games against gnubg 0-ply (pit seed 301), refit of generation 7.
# Step 2 (generation 8, shipped): one round of the pit loop from pit-a (training/recipes/pit_round.sh): pit-a's
# own damped 2-ply labels (seed 3101), rollout labels of pit-a's games against gnubg 0-ply (pit seed 303, label
# seed 2703), refit of pit-a.
# Needs gnubg (/usr/games/gnubg) for the games.  Each label folder resumes where it stopped when the
# script is run again; pits, fits and gates are redone.  About 2 hours of labels on 2 idle cores
# (BENCHMARKS.md, sessions 12-17), the fits under a minute, then a 200,000-game gate (11 min).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/gen8-recipe}
PY=${PYTHON:-.venv/bin/python}
BGBOT=${BGBOT:-.venv/bin/bgbot}
G7=checkpoints/bgbot-gen7.pt
mkdir -p "$OUT"
stamp() { echo "$(date -u +%FT%T) $*" | tee -a "$OUT/times.log"; }
gen() { $PY -m training.refine generate --workers 2 "$@"; }
# first N chunks of a label folder, as links (the rest held out of the fit)
head_chunks() {
  mkdir -p "$2/data"
  cp "$1/generate.json" "$2/"
  for ((i = 0; i < $3; i++)); do
    f=$(printf 'chunk-%05d.npz' "$i")
    ln -sf "$(realpath "$1/data/$f")" "$2/data/$f"
  done
}

stamp "step 1: labels"
gen --config configs/refine/2ply-main-roll.toml --model $G7 --out "$OUT/main-roll3" --chunks 28 --seed 2196
gen --config configs/refine/rollout-holding.toml --model $G7 --out "$OUT/ro-holding" --chunks 96 --explore 0.1 \
  --seed 2601
gen --config configs/refine/rollout-holding.toml --model $G7 --out "$OUT/ro-holding-b" --chunks 96 --explore 0.3 \
  --seed 2602
$BGBOT pit "bgbot:ply=1,checkpoint=$G7" gnubg:ply=0 --no-cube --games 2000 --workers 2 --seed 301 \
  --save-games "$OUT/recs-train-301" --out "$OUT/recs-train-301.json"
gen --config configs/refine/rollout-pit.toml --model $G7 --records "$OUT/recs-train-301" --out "$OUT/ro-pit" \
  --chunks 146 --seed 2701
head_chunks "$OUT/ro-holding" "$OUT/ro-holding-90" 90
head_chunks "$OUT/ro-holding-b" "$OUT/ro-holding-b-90" 90
head_chunks "$OUT/ro-pit" "$OUT/ro-pit-120" 120
stamp "step 1: fit (pit-a)"
$PY -m training.refine fit --config configs/refine/rollout-pit.toml --init $G7 --net main --out "$OUT/fit-pit-a" \
  --data "$OUT/main-roll3" "$OUT/ro-holding-90" "$OUT/ro-holding-b-90" "$OUT/ro-pit-120"
PA=$OUT/fit-pit-a/refined.pt
stamp "step 2 (generation 8): one round of the pit loop from pit-a"
PYTHON=$PY BGBOT=$BGBOT training/recipes/pit_round.sh "$PA" "$OUT/step2" 303 3101 2703
stamp "gate against generation 7"
$PY -m training.gate "$OUT/step2/fit/refined.pt" --name gen8-recipe --parent $G7 --games 200000 --seed 7 \
  --workers 2 --yardstick 10000 --record "$OUT/gates.jsonl"
stamp "done: $OUT/step2/fit/refined.pt"
