#!/bin/bash
# One round of the pit loop: MODEL's damped 2-ply self-play labels (configs/refine/2ply-main-roll.toml),
# rollout labels of the positions of MODEL's 1-ply games against gnubg 0-ply (configs/refine/rollout-pit.toml:
# 2,000 cubeless duplicate games, each position before a checker play rolled out 36 times to the end), and
# MODEL's main network refitted to both with the rollout-pit preset.  No gate: the caller gates OUT/fit.
#
#   training/recipes/pit_round.sh MODEL OUT PIT_SEED ROLL_SEED ROLLOUT_SEED
#
# Generation 8's second step was `pit_round.sh <step 1> OUT 303 3101 2703`.  Needs gnubg (/usr/games/gnubg).
# Label folders resume where they stopped when the script is run again; the pit and the fit are redone.
# About 30 min on 2 idle cores (3 min of 2-ply labels, 20 s of games, 21-25 min of rollouts, a 20 s fit).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ne 5 ]; then
  echo "usage: $0 MODEL OUT PIT_SEED ROLL_SEED ROLLOUT_SEED" >&2
  exit 2
fi
MODEL=$1 OUT=$2
PY=${PYTHON:-.venv/bin/python}
BGBOT=${BGBOT:-.venv/bin/bgbot}
mkdir -p "$OUT"
stamp() { echo "$(date -u +%FT%T) $*" | tee -a "$OUT/times.log"; }
stamp "damped 2-ply labels of $MODEL's self-play"
$PY -m training.refine generate --config configs/refine/2ply-main-roll.toml --model "$MODEL" --out "$OUT/roll" \
  --chunks 28 --workers 2 --seed "$4"
stamp "games against gnubg 0-ply"
$BGBOT pit "bgbot:ply=1,checkpoint=$MODEL" gnubg:ply=0 --no-cube --games 2000 --workers 2 --seed "$3" \
  --save-games "$OUT/recs" --out "$OUT/recs.json"
stamp "rollout labels of their positions"
$PY -m training.refine generate --config configs/refine/rollout-pit.toml --model "$MODEL" --records "$OUT/recs" \
  --out "$OUT/ro-pit" --chunks 140 --workers 2 --seed "$5"
stamp "fit"
$PY -m training.refine fit --config configs/refine/rollout-pit.toml --init "$MODEL" --net main --out "$OUT/fit" \
  --data "$OUT/roll" "$OUT/ro-pit"
stamp "done: $OUT/fit/refined.pt"
