"""The architecture holds: no import cycle, each layer imports only those below it, torch only where needed.

Imports are read from the source (every ``import``/``from`` statement, also inside
functions, except those under ``if TYPE_CHECKING:``), so a cycle cannot hide in a
function-level import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import loaded_after

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "bgbot"

# layer -> the layers it may import (besides itself); top-level modules errors/config/fileio/jit are the floor
LAYERS = {
    "rules": {"errors", "jit"},
    "formats": {"errors", "fileio", "rules"},
    "eval": {"errors", "config", "fileio", "jit", "rules"},
    "engine": {"errors", "config", "fileio", "jit", "rules", "formats", "eval"},
    "play": {"errors", "config", "fileio", "jit", "rules", "formats", "eval", "engine"},
    "labels": {"errors", "config", "fileio", "jit", "rules", "formats", "eval", "engine"},
    "cli": {"errors", "config", "fileio", "jit", "rules", "formats", "eval", "engine", "play", "serve", "labels"},
    "serve": {"errors", "config", "fileio", "jit", "rules", "formats", "eval", "engine", "play"},
}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def imports_of(path: Path) -> set[str]:
    """Every module (dotted name) that ``path`` imports at run time."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_lines(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            # "from bgbot.eval import pubeval" imports the submodule bgbot.eval.pubeval
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def graph() -> dict[str, set[str]]:
    mods = {module_name(p): p for p in PKG.rglob("*.py")}
    return {m: {i for i in imports_of(p) if i in mods and i != m} for m, p in mods.items()}


def layer(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "bgbot"


def test_no_import_cycle() -> None:
    g = graph()
    # package __init__ modules only re-export: drop edges into them so "a.b imports a" is no cycle
    inits = {m for m in g if (PKG / Path(*m.split(".")[1:]) / "__init__.py").exists() or m == "bgbot"}
    edges = {m: {i for i in deps if i not in inits} for m, deps in g.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                cycle = [*stack[stack.index(n) :], n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_layers_import_only_downwards() -> None:
    bad = []
    for mod, deps in graph().items():
        own = layer(mod)
        if own not in LAYERS:
            continue
        for d in deps:
            other = layer(d)
            if other not in (own, "bgbot") and other not in LAYERS[own]:
                bad.append(f"{mod} imports {d}")
    assert not bad, "\n".join(sorted(bad))


def test_numba_is_imported_only_by_bgbot_jit() -> None:
    # the kernels take their decorator from bgbot.jit, which decides per process whether numba compiles them
    where = {
        str(p.relative_to(ROOT))
        for p in PKG.rglob("*.py")
        for i in imports_of(p)
        if i == "numba" or i.startswith("numba.")
    }
    assert where == {"bgbot/jit.py"}, where


def test_only_the_train_command_imports_training() -> None:
    where = {
        str(p.relative_to(ROOT))
        for p in PKG.rglob("*.py")
        for i in imports_of(p)
        if i == "training" or i.startswith("training.")
    }
    # the CLI's `train` command is the one door into the trainer, opened only when it runs
    assert where <= {"bgbot/cli/main.py"}, where
    top = ast.parse((PKG / "cli" / "main.py").read_text()).body
    top_level = {a.module for a in top if isinstance(a, ast.ImportFrom)} | {
        n.name for a in top if isinstance(a, ast.Import) for n in a.names
    }
    assert not {m for m in top_level if m and m.split(".")[0] == "training"}


def test_rules_and_formats_import_without_torch() -> None:
    imports = (
        "bgbot, bgbot.rules.moves, bgbot.rules.movegen, bgbot.rules.matchstate, bgbot.formats.parse, "
        "bgbot.formats.board, bgbot.formats.records, bgbot.engine.cube, bgbot.engine.met"
    )
    assert loaded_after(imports, ("torch", "training", "bgbot.play", "bgbot.engine.api")) == []
