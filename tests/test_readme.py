"""The README's Python example runs as written, against the shipped model."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs() -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # our own documentation
    analysis = namespace["analysis"]
    assert len(analysis.candidates) == 16  # type: ignore[attr-defined]
    assert namespace["move"].result in [c.result for c in analysis.candidates]  # type: ignore[attr-defined]


def test_readme_names_exactly_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```\n(.*?)\n```", section, flags=re.S)
    assert len(commands) == 2
    assert commands[0].endswith("bgbot move 4HPwATDgc/ABMA 31")
    assert "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1].split("; ", 1)[1] in ci  # CI runs the README's test command
