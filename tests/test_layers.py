"""The architecture holds: no import cycle, each layer imports only those below it, torch only where needed.

Imports are read from the source (every ``import``/``from`` statement, also inside
functions, except those under ``if TYPE_CHECKING:``), so a cycle cannot hide in a
function-level import.  The strictest test also counts the imports for type hints: a
module that the engine API imports lazily must not import the API back even for its hints.
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


def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
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


def imports_of(path: Path, *, type_hints: bool = False, root: Path = ROOT) -> set[str]:
    """Every module (dotted name) that ``path`` imports at run time (``type_hints``: also under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    skip = set() if type_hints else _type_checking_lines(tree)
    package = module_name(path, root).split(".")[: None if path.name == "__init__.py" else -1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            # "from .x import y" (level 1) is from this package, level 2 from its parent
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.add(module)
            # "from bgbot.eval import pubeval" imports the submodule bgbot.eval.pubeval
            out.update(f"{module}.{a.name}" for a in node.names)
    return out


def graph(*, type_hints: bool = False) -> dict[str, set[str]]:
    mods = {module_name(p): p for p in PKG.rglob("*.py")}
    return {m: {i for i in imports_of(p, type_hints=type_hints) if i in mods and i != m} for m, p in mods.items()}


def import_cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of modules (Tarjan) with more than one member: each holds a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        on_stack.add(m)
        for n in sorted(g[m]):
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in on_stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            group = []
            while True:
                n = stack.pop()
                on_stack.discard(n)
                group.append(n)
                if n == m:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for m in sorted(g):
        if m not in index:
            visit(m)
    return sorted(groups)


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


def test_no_import_cycle_even_through_type_hints() -> None:
    # every import counts: module level, inside functions, under TYPE_CHECKING, package __init__ modules too
    assert import_cycles(graph(type_hints=True)) == []


def test_import_cycles_are_found_through_lazy_and_type_hint_imports(tmp_path: Path) -> None:
    # the detector itself: a cycle closed by an import inside a function, one closed under TYPE_CHECKING
    files = {
        "a.py": "import bgbot.b\n",
        "b.py": "def f():\n    from bgbot import a\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n",
        "d.py": "from bgbot.c import C\n",
        "e.py": "import bgbot.a\n",
    }
    (tmp_path / "bgbot").mkdir()
    for name, text in files.items():
        (tmp_path / "bgbot" / name).write_text(text)
    g = {}
    for name in files:
        deps = imports_of(tmp_path / "bgbot" / name, type_hints=True, root=tmp_path)
        g[f"bgbot.{name[:-3]}"] = {d for d in deps if d.removeprefix("bgbot.") + ".py" in files}
    assert import_cycles(g) == [["bgbot.a", "bgbot.b"], ["bgbot.c", "bgbot.d"]]


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
