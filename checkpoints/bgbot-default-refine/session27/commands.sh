#!/bin/bash
# Session 27 (BENCHMARKS.md): where generation 9's 2-ply loses to gnubg 0-ply, graded by gnubg's networks;
# bgsage 2-ply against gnubg 0-ply; crashed-network rollout labels from games against gnubg.  Run from the
# repository root; about 2 hours on two cores (each grading ~35 min on one core).
set -euo pipefail
B=.venv/bin/bgbot; PY=.venv/bin/python; G9=checkpoints/bgbot-default.pt
mkdir -p runs/s27
# 1. generation 9 at 2-ply against gnubg 0-ply, 800 games, every play graded by bgbot's 2-ply search on gnubg's nets
$B pit "bgbot:ply=2,checkpoint=$G9" gnubg:ply=0 --no-cube --games 800 --workers 2 --seed 101 --quiet \
  --save-games runs/s27/recs2 --out runs/s27/pit2.json
$PY benchmarks/loss_by_class.py runs/s27/recs2 --decisions runs/s27/dec2.jsonl
# 2. bgsage 2-ply against gnubg 0-ply on the seeds of generation 9's pits (1-4), paired
for s in 1 2 3 4; do
  $B pit bgsage:ply=2 gnubg:ply=0 --no-cube --games 2000 --workers 1 --seed $s --quiet --out runs/s27/pit_bgsage2-s$s.json
done
$PY benchmarks/pit_pairs.py 'runs/s27/pit_bgsage2-s*.json' 'checkpoints/bgbot-default-refine/pit_gen9-2ply-s*.json'
# 3. crashed positions of games against gnubg (2-ply seed 308, 1-ply seed 309), rolled out, the crashed net refitted
$B pit "bgbot:ply=2,checkpoint=$G9" gnubg:ply=0 --no-cube --games 4000 --workers 2 --seed 308 --quiet \
  --save-games runs/s27/recs-308 --out runs/s27/pit-308.json
$B pit "bgbot:ply=1,checkpoint=$G9" gnubg:ply=0 --no-cube --games 12000 --workers 2 --seed 309 --quiet \
  --save-games runs/s27/recs-309 --out runs/s27/pit-309.json
mkdir -p runs/s27/recs-all
for d in 308 309; do for f in runs/s27/recs-$d/*; do ln -sf "$(realpath "$f")" "runs/s27/recs-all/s$d-$(basename "$f")"; done; done
$PY -m training.refine generate --config configs/refine/rollout-pit-crashed.toml --model $G9 --records runs/s27/recs-all \
  --out runs/s27/ro-crashed --chunks 128 --workers 2
$PY -m training.refine fit --config configs/refine/rollout-pit-crashed.toml --init $G9 --data runs/s27/ro-crashed \
  --net crashed --lr 3e-4 --out runs/s27/fit-cr-3e-4
$PY benchmarks/checker_error.py --checkpoint runs/s27/fit-cr-3e-4/refined.pt --data tests/data/benchmark/checker-3000.jsonl --plies 1,2 --no-ref
# 4. the candidate on step 1's dice, graded the same way
$B pit "bgbot:ply=2,checkpoint=runs/s27/fit-cr-3e-4/refined.pt" gnubg:ply=0 --no-cube --games 800 --workers 2 --seed 101 \
  --quiet --save-games runs/s27/recs-cr --out runs/s27/pit-cr.json
$PY benchmarks/loss_by_class.py runs/s27/recs-cr --decisions runs/s27/dec-cr.jsonl   # run here as two halves at once
$PY benchmarks/judge_pairs.py runs/s27/dec-cr.jsonl --against runs/s27/dec2.jsonl
# 5. the candidate's 2-ply pits on generation 9's seeds, paired
for s in 1 2 3 4 5; do
  $B pit "bgbot:ply=2,checkpoint=runs/s27/fit-cr-3e-4/refined.pt" gnubg:ply=0 --no-cube --games 2000 --workers 2 --seed $s \
    --quiet --out runs/s27/pit_crro-2ply-s$s.json
done
$PY benchmarks/pit_pairs.py 'runs/s27/pit_crro-2ply-s*.json' 'checkpoints/bgbot-default-refine/pit_gen9-2ply-s*.json'
