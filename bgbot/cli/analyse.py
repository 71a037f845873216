"""``bgbot analyse FILE [--ply N] [--json] [--html OUT]``: grade every decision of a recorded match.

FILE is a Jellyfish ``.mat`` (gnubg's, eXtreme Gammon's or bgbot's pit export) or a gnubg ``.sgf``.
Every game is replayed through the rules; each checker play and cube action is graded at ``--ply``
(XG convention: 1-ply = the network alone) with match-aware cubeful equities
(:mod:`bgbot.engine.analyse`).  The default output is text laid out like gnubg's match statistics;
``--json`` prints everything as JSON; ``--html OUT`` also writes a report with a graph of player 0's
match winning chance (or equity) over the match, as an embedded PNG.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bgbot.cli.options import add_filter_option

if TYPE_CHECKING:
    from bgbot.engine.analyse import MatchAnalysis

__all__ = ["GNUBG_MARK", "add_parser", "html_report", "timeline_png"]


def _whole(text: str) -> int:
    from bgbot.errors import ascii_int

    try:
        v = ascii_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return v


def timeline_png(analysis: MatchAnalysis) -> bytes:
    """A PNG of player 0's prospects before each turn: MWC in a match, equity + points won in money play."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    m = analysis.match
    values = [v for _, v in analysis.timeline]
    games = [g for g, _ in analysis.timeline]
    fig, ax = plt.subplots(figsize=(9, 3.6), dpi=100)
    try:
        xs = list(range(1, len(values) + 1))
        ax.plot(xs, [100 * v for v in values] if m.length else values, lw=1.4, color="#1f5fa8")
        for k in range(1, len(games)):
            if games[k] != games[k - 1]:
                ax.axvline(k + 0.5, color="#999999", lw=0.8, ls="--")
        if m.length:
            ax.set_ylim(0, 100)
            ax.axhline(50, color="#cccccc", lw=0.8)
            ax.set_ylabel(f"{m.names[0]}'s MWC (%)")
        else:
            ax.axhline(0, color="#cccccc", lw=0.8)
            ax.set_ylabel(f"{m.names[0]}'s equity + points")
        ax.set_xlabel("turn (dashed lines: new game)")
        ax.set_title(f"{m.names[0]} vs {m.names[1]}" + (f", {m.length}-point match" if m.length else ", money"))
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    return buf.getvalue()


#: gnubg's names for bgbot's marks (gnubg's ``show analysis``: doubtful, bad, very bad)
GNUBG_MARK = {"doubtful": "doubtful", "error": "bad", "blunder": "very bad"}


def _mistakes_html(analysis: MatchAnalysis, mistakes: int) -> str:
    """Each player's ``mistakes`` costliest marked decisions (errors from that player's view), one table each.

    A decision is marked as gnubg marks it: doubtful, bad (bgbot: error) or very bad (bgbot: blunder) from the
    thresholds of the analysis; the heading says how many of the player's decisions are marked and how many of
    them are listed, so that "none marked" is only ever said of a player with no marked decision.
    """
    t = analysis.thresholds
    parts = [
        f"<p>Marks as gnubg's: doubtful &ge; {t.doubtful:.3f}, bad (error) &ge; {t.error:.3f}, "
        f"very bad (blunder) &ge; {t.blunder:.3f} EMG lost.</p>"
    ]
    head = (
        "<tr><th>game</th><th>turn</th><th>dice</th><th>played</th><th>better</th><th>EMG lost</th>"
        "<th>mark</th><th>position</th></tr>"
    )
    for i, p in enumerate(analysis.players):
        marked = sum(p.checker_marks.values()) + sum(p.cube_marks.values())
        worst = analysis.mistakes(i, mistakes)
        name = html.escape(p.name)
        if not marked:
            parts.append(f'<h3>{name}</h3>\n<p class="marked" data-player="{i}" data-marked="0">none marked</p>')
            continue
        shown = "all" if len(worst) == marked else f"the {len(worst)} biggest" if worst else "none"
        parts.append(
            f'<h3>{name}</h3>\n<p class="marked" data-player="{i}" data-marked="{marked}">'
            f"{marked} marked decision{'s' if marked != 1 else ''}; {shown} listed</p>"
        )
        if not worst:
            continue
        rows = []
        for d in worst:
            dice = f"{d.dice[0]}{d.dice[1]}" if d.dice else ""
            mark = f"{GNUBG_MARK[d.skill]} ({d.skill})" if d.skill != "doubtful" else d.skill
            cells = (d.game, d.turn, dice, d.played, d.best, f"{d.error:.3f}", mark, d.position.gnubg_id())
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in cells) + "</tr>")
        parts.append(f'<table class="mistakes" data-player="{i}">{head}\n' + "\n".join(rows) + "\n</table>")
    return "\n".join(parts)


def html_report(analysis: MatchAnalysis, mistakes: int = 10) -> str:
    """A self-contained HTML page: the statistics, each player's biggest mistakes, and the graph (embedded PNG).

    Positions are gnubg Position IDs from the side on roll's view; errors are from the deciding player's view.
    """
    png = base64.b64encode(timeline_png(analysis)).decode("ascii")
    m = analysis.match
    title = f"{m.names[0]} vs {m.names[1]}" + (f", {m.length}-point match" if m.length else ", money session")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:2em}} pre{{background:#f6f6f6;padding:1em}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:2px 6px;font-size:90%}}</style>
</head><body>
<h1>{html.escape(title)}</h1>
<p>Analysed by bgbot at {analysis.ply}-ply (XG convention) in {analysis.seconds:.1f} s.</p>
<img alt="match winning chance over the match" src="data:image/png;base64,{png}">
<h2>Statistics</h2>
<pre>{html.escape(analysis.text(mistakes=0))}</pre>
<h2>Biggest mistakes</h2>
{_mistakes_html(analysis, mistakes)}
</body></html>
"""


def _analyse_one(args: argparse.Namespace, path: str, html_out: str | None,
                 progress: Any = None, match: Any = None, workers: int = 1) -> tuple[str, dict[str, Any] | None]:
    """Analyse one record (its games in ``workers`` processes): its text report and, with ``--json``, its
    JSON-ready dict (the HTML report written)."""
    from bgbot.engine.answers import finished
    from bgbot.engine.api import Engine
    from bgbot.engine.search import check_ply, parse_filters
    from bgbot.fileio import write_text_atomic
    from bgbot.formats.records import read_match

    ply = check_ply(args.ply)
    filters = parse_filters(args.filter)
    match = read_match(path, args.format) if match is None else match
    engine = Engine.load(args.checkpoint, filters=filters)
    analysis = engine.analyse(match, ply, luck=args.luck, progress=progress, workers=workers)
    if html_out:
        write_text_atomic(html_out, html_report(analysis, args.mistakes), parents=True)
    if args.json:
        data: dict[str, Any] = analysis.to_dict(args.mistakes)
        if html_out:
            data["html"] = str(html_out)
        return "", finished(data)
    text = analysis.text(args.mistakes)
    return text + (f"\nHTML report: {html_out}\n" if html_out else ""), None


def _records_in(folder: Path) -> list[Path]:
    """The match records (``.mat``, ``.sgf``) directly in ``folder``, by name."""
    from bgbot.errors import ConfigError

    found = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in (".mat", ".sgf"))
    if not found:
        raise ConfigError(f"no .mat or .sgf match records in the folder {str(folder)!r}")
    return found


def _cmd_analyse_folder(args: argparse.Namespace, folder: Path) -> int:
    """``bgbot analyse DIR``: every record of the folder, one process per core, a progress bar over the files."""
    import concurrent.futures as cf
    import json
    import multiprocessing as mp
    import os
    import sys

    from tqdm import tqdm

    from bgbot.engine.executor import one_thread_each
    from bgbot.engine.search import check_ply

    check_ply(args.ply)  # a bad ply fails before any process starts
    files = _records_in(folder)
    html_dir = Path(args.html) if args.html else None
    if html_dir is not None and html_dir.exists() and not html_dir.is_dir():
        from bgbot.errors import ConfigError

        raise ConfigError(f"with a folder of records --html names a folder for the reports, got the file "
                          f"{str(html_dir)!r}")
    workers = max(1, min(args.workers or (os.cpu_count() or 1), len(files)))
    results: dict[Path, tuple[str, dict[str, Any] | None]] = {}
    outs = {f: str(html_dir / f"{f.stem}.html") if html_dir else None for f in files}
    bar = tqdm(total=len(files), unit="match", disable=args.quiet or not sys.stderr.isatty(), leave=False)
    try:
        if workers == 1:
            for f in files:
                results[f] = _analyse_one(args, str(f), outs[f])
                bar.update(1)
        else:
            # spawned processes: each loads the model and the cached kernels once (ensure_warm ran here first),
            # with an engine of one thread (the records are spread over the cores already)
            with cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
                with one_thread_each():  # the workers start with the submissions
                    futures = {pool.submit(_analyse_one, args, str(f), outs[f]): f for f in files}
                for fut in cf.as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(1)
    finally:
        bar.close()
    if args.json:
        print(json.dumps({str(f): results[f][1] for f in files}, indent=1))
    else:
        for i, f in enumerate(files):
            print(("\n" if i else "") + f"== {f} ==")
            print(results[f][0], end="")
    return 0


def _match_workers(args: argparse.Namespace, match: Any) -> int:
    """Processes for the games of one match: ``--workers``, else one per core at 3-ply (a match takes tens of
    seconds there); at 1- and 2-ply a match takes seconds, not much more than starting processes that load
    the model."""
    import os

    from bgbot.engine.search import check_ply

    if len(match.games) < 2:
        return 1
    if args.workers:
        return min(args.workers, len(match.games))
    return min(os.cpu_count() or 1, len(match.games)) if check_ply(args.ply) >= 3 else 1


def _cmd_analyse(args: argparse.Namespace) -> int:
    import sys

    from tqdm import tqdm

    from bgbot.cli.warmup import ensure_warm
    from bgbot.engine.search import check_ply, parse_filters
    from bgbot.formats.records import read_match

    check_ply(args.ply)  # a bad option or record fails before any compiling
    parse_filters(args.filter)
    folder = Path(args.file).is_dir()
    match = None if folder else read_match(args.file, args.format)
    ensure_warm(progress=not args.quiet)  # the first analysis after an install compiles, with a progress bar
    if folder:
        return _cmd_analyse_folder(args, Path(args.file))
    total = sum(len(g.actions) for g in match.games)
    with tqdm(total=total, unit="action", disable=args.quiet or not sys.stderr.isatty(), leave=False) as bar:
        text, data = _analyse_one(args, args.file, args.html, progress=lambda n: bar.update(n - bar.n), match=match,
                                  workers=_match_workers(args, match))
    if data is not None:
        import json

        print(json.dumps(data, indent=1))
    else:
        print(text, end="")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``bgbot analyse``."""
    s = sub.add_parser(
        "analyse",
        aliases=["analyze"],
        help="grade every checker play and cube action of a .mat or .sgf match record",
    )
    s.add_argument("file", help="a Jellyfish .mat or gnubg .sgf record, or a folder of them (analysed in parallel)")
    s.add_argument("--ply", default="2", help="analysis ply, 1-3 (XG numbering: 1 = the network; default 2)")
    add_filter_option(s)
    s.add_argument("--json", action="store_true", help="print the whole analysis as JSON")
    s.add_argument("--html", metavar="OUT", help="also write an HTML report with a graph of the match "
                   "(for a folder of records: a folder, one report per record)")
    s.add_argument("--workers", type=_whole, default=0,
                   help="processes: for a folder of records (default: one per core), or for the games of one "
                   "match (default: one per core at 3-ply, else 1)")
    s.add_argument("--format", choices=("mat", "sgf"), help="the record's format (default: from the file name)")
    s.add_argument("--mistakes", type=_whole, default=5, help="biggest mistakes listed per player (default 5)")
    s.add_argument("--luck", action=argparse.BooleanOptionalAction, default=True, help="luck analysis (default on)")
    s.add_argument("--checkpoint", help="network file (default: the shipped model)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_cmd_analyse)
