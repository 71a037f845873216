#!/bin/bash
# Rebuild the shipped model (generation 9) from its parent, generation 8 (checkpoints/bgbot-gen8.pt), with the
# recorded presets and seeds, then gate it.  docs/model.md says what each step is and what it gave.
#
#   training/recipes/rebuild-default.sh [PARENT] [OUT]   (defaults: checkpoints/bgbot-gen8.pt, runs/rebuild-default)
#
# 1. damped 2-ply labels of the parent's self-play (configs/refine/2ply-main-roll.toml, seed 3104);
# 2. 2,000 cubeless 1-ply games of the parent against gnubg 0-ply (seed 306), saved;
# 3. rollout labels of those games' contact positions (configs/refine/rollout-pit.toml, seed 2706);
# 4. 2-ply values of the six best plays of rolls of the parent's self-play, stored by roll
#    (configs/refine/2ply-rank.toml, seed 3401);
# 5. the parent's main network refitted to 1, 3 and 4 with the sibling loss (2ply-rank: fit --rank 1);
# 6. the gate against the parent (200,000-game duel, seed 11).
#
# Needs gnubg (/usr/games/gnubg) for step 2.  Label folders resume where they stopped when the script is run
# again; the games, the fit and the gate are redone.  About 87 minutes of labels and fits on two cores, then
# 20-25 minutes of gate; the result equals checkpoints/bgbot-default.pt weight for weight
# (python benchmarks/same_weights.py checkpoints/bgbot-default.pt OUT/fit/refined.pt).
set -euo pipefail
cd "$(dirname "$0")/../.."
PARENT=${1:-checkpoints/bgbot-gen8.pt}
OUT=${2:-runs/rebuild-default}
PY=${PYTHON:-.venv/bin/python}
BGBOT=${BGBOT:-.venv/bin/bgbot}
mkdir -p "$OUT"
stamp() { echo "$(date -u +%FT%T) $*" | tee -a "$OUT/times.log"; }
stamp "damped 2-ply labels of the parent's self-play"
$PY -m training.refine generate --config configs/refine/2ply-main-roll.toml --model "$PARENT" --out "$OUT/roll" \
  --chunks 28 --workers 2 --seed 3104
stamp "games against gnubg 0-ply"
$BGBOT pit "bgbot:ply=1,checkpoint=$PARENT" gnubg:ply=0 --no-cube --games 2000 --workers 2 --seed 306 \
  --save-games "$OUT/recs" --out "$OUT/recs.json"
stamp "rollout labels of their positions"
$PY -m training.refine generate --config configs/refine/rollout-pit.toml --model "$PARENT" --records "$OUT/recs" \
  --out "$OUT/ro-pit" --chunks 140 --workers 2 --seed 2706
stamp "2-ply values of the six best plays of a roll, by roll"
$PY -m training.refine generate --workers 2 --config configs/refine/2ply-rank.toml --model "$PARENT" \
  --out "$OUT/rank" --chunks 240 --seed 3401
stamp "fit with the sibling loss"
$PY -m training.refine fit --config configs/refine/2ply-rank.toml --init "$PARENT" --net main --out "$OUT/fit" \
  --data "$OUT/roll" "$OUT/ro-pit" "$OUT/rank"
stamp "gate against the parent"
$PY -m training.gate "$OUT/fit/refined.pt" --name rebuild-default --parent "$PARENT" --games 200000 --seed 11 \
  --workers 2 --yardstick 10000 --record "$OUT/gates.jsonl"
stamp "done: $OUT/fit/refined.pt"
