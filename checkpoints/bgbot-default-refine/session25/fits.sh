set -e
R=runs/gen9-recipe
D="$R/round/roll $R/round/ro-pit runs/g10/ro-pit"
.venv/bin/python -m training.refine fit --config configs/refine/rollout-siblings.toml --init checkpoints/bgbot-default.pt --net main --out runs/g11/fitS1 --data $D $R/rank runs/g11/ro-sib-train
echo "$(date -u +%T) S1 done"
.venv/bin/python -m training.refine fit --config configs/refine/rollout-siblings.toml --init checkpoints/bgbot-default.pt --net main --out runs/g11/fitS3 --data $D runs/g11/ro-sib-train
echo "$(date -u +%T) S3 done"
.venv/bin/python -m training.refine fit --config configs/refine/rollout-siblings.toml --init checkpoints/bgbot-default.pt --net main --out runs/g11/fitS2 --data $D $R/rank runs/g11/ro-sib-train --rank 3
echo "$(date -u +%T) S2 done"
.venv/bin/python -m training.refine fit --config configs/refine/rollout-siblings.toml --init checkpoints/bgbot-default.pt --net main --out runs/g11/fitS4 --data $D runs/g11/ro-sib-train --epochs 8 --lr 3e-4
# runs/g11/ro-sib-train: links to chunks 20-220 of runs/g11/ro-sib; runs/g11/ro-sib-test: chunks 0-19 (held out)
