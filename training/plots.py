"""Learning-curve plots from a run's ``metrics.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path


def plot_learning_curve(metrics: str | Path, png: str | Path) -> Path:
    """Plot ppg against pubeval (with +-1 standard error) over games trained into ``png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(line) for line in Path(metrics).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "ppg" in r]
    games = [r["games_trained"] for r in rows]
    ppg = [r["ppg"] for r in rows]
    se = [r.get("se", 0.0) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.errorbar(games, ppg, yerr=se, marker="o", ms=3, capsize=2, label="bgbot 1-ply vs pubeval")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.axhline(0.35, color="tab:green", lw=0.8, ls="--", label="target +0.35")
    ax.axhline(0.63, color="tab:red", lw=0.8, ls=":", label="gnubg 0-ply +0.63")
    ax.set_xlabel("self-play games trained")
    ax.set_ylabel("points per game (duplicate dice)")
    ax.set_title("bgbot learning curve")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png)
    plt.close(fig)
    return png
