"""Every command quoted in README.md, BENCHMARKS.md and docs/*.md runs as written.

A command is a line of a fenced code block (plain, ``sh``, ``bash`` or ``console``; ``text`` blocks are output and
synopses) that starts with ``bgbot``, ``python``/``.venv/bin/python`` (a benchmark script or a ``-m training.*``
module), after any ``VAR=value`` prefixes and a ``$`` prompt. The quick ones (a one-position question: ``show``,
``moves``, ``move``, ``cube``, ``eval``) run for real and must exit 0. The others (pits, rollouts, training,
servers) would take minutes, so their arguments are parsed by the very parser the command uses, which is stopped
right after a successful parse (argparse patched for the test): an unknown option, a misspelt command or a bad value
fails the test. A usage synopsis (optional parts in square brackets, ``[--ply N]``) is not a command and is skipped.
The README's two set-up commands are checked by ``tests/test_readme.py`` and CI.
"""

from __future__ import annotations

import argparse
import re
import runpy
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([A-Za-z]*)\n(.*?)^```", flags=re.S | re.M)
QUICK = {"show", "moves", "move", "cube", "eval"}
COMMAND = re.compile(
    r"^((\.venv/bin/)?bgbot |(python3?|\.venv/bin/python) (benchmarks/|-m training\.))"
)
SYNOPSIS = re.compile(r"\[-")  # "bgbot ubgi [--ply 1]": a usage line, its optional parts in brackets

class _Parsed(Exception):
    """Raised by the patched parser once the command's own arguments parsed: the work is never started."""


def _dry_parse(monkeypatch: pytest.MonkeyPatch, run: Callable[[], object]) -> None:
    """Run ``run`` until its outermost argparse parse succeeds (then stop it); a parse error fails the test."""
    parse_args, parse_known = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args
    depth = [0]

    def patched_parse_args(self: argparse.ArgumentParser, *a: Any, **k: Any) -> Any:
        depth[0] += 1  # a subcommand's parser is parsed inside the outermost parse_args
        parse_args(self, *a, **k)
        raise _Parsed

    def patched_parse_known(self: argparse.ArgumentParser, *a: Any, **k: Any) -> Any:
        if depth[0]:
            return parse_known(self, *a, **k)
        depth[0] += 1
        parse_known(self, *a, **k)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", patched_parse_args)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", patched_parse_known)
    try:
        run()
    except _Parsed:
        return
    except SystemExit as e:
        pytest.fail(f"argparse refused the arguments (exit {e.code})")
    pytest.fail("the command did no argument parsing")


def _commands() -> list[tuple[str, str]]:
    """(where, command) for every command line in the docs' fenced blocks, continuation lines joined."""
    found: list[tuple[str, str]] = []
    for doc in DOCS:
        text = doc.read_text()
        for m in FENCE.finditer(text):
            if m.group(1) not in ("", "sh", "bash", "console"):
                continue
            line_no = text[: m.start()].count("\n") + 2
            joined = m.group(2).replace("\\\n", " ")
            for line in joined.splitlines():
                cmd = line.strip()
                if cmd.startswith("$ "):
                    cmd = cmd[2:]
                while re.match(r"^[A-Z_]+=\S*\s", cmd):
                    cmd = cmd.split(None, 1)[1]
                if SYNOPSIS.search(cmd):
                    continue
                if COMMAND.match(cmd):
                    found.append((f"{doc.relative_to(ROOT)}:{line_no}", cmd))
    return found


COMMANDS = _commands()


def test_the_docs_quote_commands() -> None:
    where = {w.split(":")[0] for w, _ in COMMANDS}
    assert {"README.md", "BENCHMARKS.md", "docs/model.md", "CONTRIBUTING.md"} <= where


def _argv(cmd: str) -> list[str]:
    """The command's words, without a trailing comment, a trailing ``&`` or a pipe into another program."""
    words = shlex.split(cmd, comments=True)
    if words and words[-1] == "&":
        words.pop()
    if "|" in words:
        words = words[: words.index("|")]
    return words


@pytest.mark.parametrize(("where", "cmd"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_quoted_command_runs_as_written(where: str, cmd: str, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    words = _argv(cmd)
    head, args = words[0], words[1:]
    monkeypatch.chdir(ROOT)
    if head.endswith("bgbot"):
        if args and args[0] in QUICK:
            done = subprocess.run([sys.executable, "-m", "bgbot.cli", *args], cwd=ROOT, capture_output=True,
                                  text=True, timeout=300)
            assert done.returncode == 0, f"{where}: {cmd!r} exited {done.returncode}: {done.stderr[-800:]}"
            assert done.stdout.strip()
            return
        from bgbot.cli.main import main

        _dry_parse(monkeypatch, lambda: main(args))
    elif args[:1] == ["-m"]:
        monkeypatch.setattr(sys, "argv", [args[1], *args[2:]])
        _dry_parse(monkeypatch, lambda: runpy.run_module(args[1], run_name="__main__", alter_sys=True))
    else:
        script = ROOT / args[0]
        assert script.is_file(), f"{where}: {args[0]} does not exist"
        monkeypatch.setattr(sys, "argv", [str(script), *args[1:]])
        monkeypatch.syspath_prepend(str(script.parent))
        _dry_parse(monkeypatch, lambda: runpy.run_path(str(script), run_name="__main__"))
