set -e
.venv/bin/python -m training.refine fit --config configs/refine/rollout-pit.toml --init checkpoints/bgbot-default.pt --net main --out runs/g10/fitB --data runs/gen9-recipe/round/roll runs/gen9-recipe/round/ro-pit runs/g10/ro-pit
.venv/bin/python -m training.refine fit --config configs/refine/2ply-rank.toml --init checkpoints/bgbot-gen8.pt --net main --out runs/g10/fitD --data runs/gen9-recipe/round/roll runs/gen9-recipe/round/ro-pit runs/g10/ro-pit runs/gen9-recipe/rank
.venv/bin/python -m training.refine fit --config configs/refine/2ply-rank.toml --init checkpoints/bgbot-default.pt --net main --out runs/g10/fitA --data runs/gen9-recipe/round/roll runs/gen9-recipe/round/ro-pit runs/g10/ro-pit runs/gen9-recipe/rank
