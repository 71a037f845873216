#!/bin/bash
# Session 26 (issue 9): what was run, in order (from the repository root; records beside this file).
set -euo pipefail
PY=.venv/bin/python
D="runs/gen9-recipe/round/roll runs/gen9-recipe/round/ro-pit runs/gen9-recipe/rank"   # generation 9's recipe labels
# v4b: generation 9's recipe fit from generation 8 moved to encoding version 4 (the new inputs start at zero)
$PY -m training.refine fit --config configs/refine/2ply-rank.toml --init checkpoints/bgbot-gen8.pt --net main \
  --out runs/g12/v4b --encoding 4 --data $D
# fresh networks from random weights (torch seed 5) on the same labels, encoding 3 and 4 (run side by side)
for v in 3 4; do
  $PY -m training.refine fit --config configs/refine/fresh256.toml --init checkpoints/bgbot-gen8.pt --net main \
    --out runs/g12/fresh-v$v --encoding $v --data $D
done
# two more fresh networks on encoding 3 (torch seeds 6 and 7), for ens5
for k in 6 7; do
  $PY -m training.refine fit --config configs/refine/fresh256.toml --init checkpoints/bgbot-gen8.pt --net main \
    --out runs/g12/fresh-s$k --fresh-seed $k --data $D
done
# ensembles: one wide network whose logits are the members' mean
$PY -m training.refine ensemble --models checkpoints/bgbot-default.pt runs/g12/fresh-v3/refined.pt --out runs/g12/ens2
$PY -m training.refine ensemble --models checkpoints/bgbot-default.pt runs/g12/fresh-v3/refined.pt \
  runs/g12/fresh-v4/refined.pt --out runs/g12/ens3
$PY -m training.refine ensemble --models checkpoints/bgbot-default.pt runs/g12/fresh-v3/refined.pt \
  runs/g12/fresh-v4/refined.pt runs/g12/fresh-s6/refined.pt runs/g12/fresh-s7/refined.pt --out runs/g12/ens5
# distillation: the recipe's boards relabelled with the mean probabilities of the three networks, then fitted
$PY checkpoints/bgbot-default-refine/session26/distill_labels.py \
  checkpoints/bgbot-default.pt,runs/g12/fresh-v3/refined.pt,runs/g12/fresh-v4/refined.pt runs/g12/dist3 $D
DD="runs/g12/dist3/roll runs/g12/dist3/ro-pit runs/g12/dist3/rank"
$PY -m training.refine fit --config configs/refine/2ply-rank.toml --init checkpoints/bgbot-default.pt --net main \
  --out runs/g12/d1 --data $DD
$PY -m training.refine fit --config configs/refine/fresh256.toml --init checkpoints/bgbot-default.pt --net main \
  --out runs/g12/d2 --data $DD
# held-out benchmark, paired with generation 9
$PY benchmarks/benchmark_pairs.py runs/g12/v4b/refined.pt runs/g12/fresh-v3/refined.pt runs/g12/fresh-v4/refined.pt \
  runs/g12/ens2/refined.pt runs/g12/ens3/refined.pt runs/g12/d1/refined.pt runs/g12/d2/refined.pt \
  runs/g12/fresh-s6/refined.pt runs/g12/fresh-s7/refined.pt runs/g12/ens5/refined.pt \
  --against checkpoints/bgbot-default.pt --plies 1,2 --data tests/data/benchmark/checker-3000.jsonl
# 2-ply against gnubg 0-ply, paired by seed with generation 9's pits. The pits ran on runs/g12/ens3.pt, written by a
# one-off script before `refine ensemble` existed; its weights are the command's, tensor for tensor (checked).
for s in $(seq 1 14); do
  .venv/bin/bgbot pit "bgbot:ply=2,checkpoint=runs/g12/ens3.pt" gnubg:ply=0 --no-cube --games 2000 --workers 2 \
    --seed $s --quiet --out runs/g12/pits/pit_ens3-2ply-s$s.json
done
$PY benchmarks/pit_pairs.py 'runs/g12/pits/pit_ens3-2ply-s*.json' 'checkpoints/bgbot-default-refine/pit_gen9-2ply-s*.json'
