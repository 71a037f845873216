"""gnubg's own money cube decisions at 0, 1 and 2 ply on the cube benchmark, against its 2-ply reference.

Shows how much of bgbot's disagreement with gnubg 2-ply is the depth of the lookahead: bgbot's 2-ply cube
decision is one roll of gnubg's cubeful lookahead, the tree of gnubg's 1-ply.  Two steps (money, Jacoby
and beavers off, as the benchmark file was made; see tests/data/README.md)::

    # inside gnubg (about a minute): writes one line per position with gnubg's decision at each ply
    REGEN_OUT=runs/gnubg-cube-plies.jsonl gnubg -t -q -r -p benchmarks/gnubg_cube_plies.py
    # plain Python: agreement and confusion of each ply with the file's decision
    python benchmarks/gnubg_cube_plies.py runs/gnubg-cube-plies.jsonl

Each line written: ``{"position", "plies": {"0": [decision code, no double, double/take], ...}}``, the
equities normalised to the cube value, from the side on roll.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

try:
    ROOT = Path(__file__).resolve().parents[1]
except NameError:  # gnubg's -p runs the script without __file__: run it from the repository root
    ROOT = Path.cwd()
DATA = ROOT / "tests" / "data" / "benchmark" / "cube-1000.jsonl"
# gnubg's cube decision codes (tests/data/regenerate.py's DECISION_BY_CODE)
DECISION_BY_CODE = {0: "double_take", 1: "double_pass", 2: "no_double", 3: "too_good_take", 4: "too_good_pass",
                    7: "double_take", 8: "double_pass", 9: "no_double", 10: "too_good_take", 11: "too_good_pass"}
ACTIONS = ("no_double", "double_take", "double_pass", "too_good_take", "too_good_pass")


def in_gnubg(out: Path, data: Path) -> None:
    """Run inside gnubg's Python: write gnubg's cubeful decisions at 0, 1 and 2 ply for every line of ``data``."""
    import gnubg  # only inside gnubg

    for cmd in ("set jacoby off", "set beavers 0", "new session"):
        gnubg.command(cmd)
    contexts = {n: gnubg.evalcontext(1, n, 1, 1, 0.0) for n in (0, 1, 2)}
    lines = []
    for line in data.read_text().splitlines():
        r = json.loads(line)
        board = gnubg.positionfromid(r["position"])
        ci = gnubg.cubeinfo(r["cube"]["value"], -1 if r["cube"]["owner"] == "center" else 0, 0, 0)
        plies = {}
        for n, ctx in contexts.items():
            _, nd, dt, _, code, _ = gnubg.cfevaluate(board, ci, ctx)
            plies[str(n)] = [code, round(nd, 6), round(dt, 6)]
        lines.append(json.dumps({"position": r["position"], "plies": plies}, separators=(",", ":")))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, out)


def report(path: Path, data: Path) -> int:
    """Print each ply's agreement with the file's (gnubg 2-ply) decision and its confusion table."""
    try:
        rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
        got = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as e:
        print(f"gnubg_cube_plies: cannot read {str(path)!r} and {str(data)!r}: {e}", file=sys.stderr)
        return 2
    if [g["position"] for g in got] != [r["position"] for r in rows]:
        print(f"gnubg_cube_plies: {str(path)!r} does not hold the positions of {str(data)!r} in order",
              file=sys.stderr)
        return 2
    for n in sorted(got[0]["plies"]):
        conf = Counter((r["decision"], DECISION_BY_CODE.get(g["plies"][n][0], "optional"))
                       for r, g in zip(rows, got, strict=True))
        agree = sum(c for (a, b), c in conf.items() if a == b)
        print(f"gnubg {n}-ply: {agree}/{len(rows)} = {100 * agree / len(rows):.1f}% agree with gnubg 2-ply "
              "(rows: the file's decision, columns: this ply's)")
        for a in ACTIONS:
            print(f"  {a:<14}" + "".join(f"{conf[(a, b)]:>6}" for b in ACTIONS))
    return 0


if __name__ == "__main__":
    if "REGEN_OUT" in os.environ:
        in_gnubg(Path(os.environ["REGEN_OUT"]), Path(os.environ.get("REGEN_DATA", DATA)))
    else:
        if len(sys.argv) < 2:
            raise SystemExit(__doc__)
        raise SystemExit(report(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else DATA))
