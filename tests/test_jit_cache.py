"""Where numba caches bgbot's compiled kernels, and which kernels a first question runs on (bgbot.jit, bgbot warm-up).

A read-only install location must still cache: the compiled code then goes to the user's cache folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bgbot import jit

ROOT = Path(__file__).resolve().parent.parent


def test_the_sources_own_pycache_when_it_is_writable() -> None:
    assert jit.cache_dir(env={"HOME": "/home/u"}, package=Path("/site/bgbot"), can_write=lambda p: True) is None


def test_a_read_only_install_caches_in_the_users_cache_folder() -> None:
    asked: list[Path] = []

    def read_only(p: Path) -> bool:
        asked.append(p)
        return False

    env = {"HOME": "/home/u"}
    got = jit.cache_dir(env=env, package=Path("/usr/lib/python3/site-packages/bgbot"), can_write=read_only)
    assert got == Path("/home/u/.cache/bgbot/numba")
    assert asked[0] == Path("/usr/lib/python3/site-packages/bgbot/rules/__pycache__")
    got = jit.cache_dir(env={**env, "XDG_CACHE_HOME": "/var/cache/u"}, package=Path("/x/bgbot"), can_write=read_only)
    assert got == Path("/var/cache/u/bgbot/numba")


def test_one_unwritable_kernel_folder_is_enough_to_move_the_cache() -> None:
    def only_rules(p: Path) -> bool:
        return p.parent.name == "rules"

    assert jit.cache_dir(env={"HOME": "/h"}, package=Path("/x/bgbot"), can_write=only_rules) == Path(
        "/h/.cache/bgbot/numba"
    )


def test_numba_cache_dir_set_by_the_user_wins() -> None:
    env = {"HOME": "/h", "NUMBA_CACHE_DIR": "/fast/disk/numba"}
    assert jit.cache_dir(env=env, package=Path("/x/bgbot"), can_write=lambda p: False) == Path("/fast/disk/numba")
    assert jit.cache_dir(env=env, package=Path("/x/bgbot"), can_write=lambda p: True) == Path("/fast/disk/numba")


def test_user_cache_root_per_platform() -> None:
    assert jit.user_cache_root({"HOME": "/Users/u"}, "darwin") == Path("/Users/u/Library/Caches/bgbot/numba")
    assert jit.user_cache_root({"HOME": "/h", "LOCALAPPDATA": "/c/Local"}, "win32") == Path("/c/Local/bgbot/numba")
    # the XDG spec: a relative XDG_CACHE_HOME is ignored
    assert jit.user_cache_root({"HOME": "/h", "XDG_CACHE_HOME": "rel/dir"}, "linux") == Path("/h/.cache/bgbot/numba")


def test_writable_tries_for_real(tmp_path: Path) -> None:
    assert jit.writable(tmp_path / "new" / "__pycache__")  # made when missing
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert not jit.writable(blocker / "__pycache__")  # cannot be made: a file is in the way


def _run(code: str, env: dict[str, str], cwd: Path) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "BGBOT_JIT", "XDG_CACHE_HOME")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**clean, **env}, cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_kernel_compiled_under_a_read_only_install_is_cached_in_the_user_folder(tmp_path: Path) -> None:
    (tmp_path / "kern.py").write_text(textwrap.dedent("""
        from bgbot.jit import njit

        @njit(cache=True)
        def add(a, b):
            return a + b
    """))
    cache = tmp_path / "xdg"
    code = """
        import os
        import bgbot.jit as jit
        jit.writable = lambda folder: False  # as if bgbot's folders could not be written
        import kern
        assert kern.add(2, 3) == 5
        print(os.environ["NUMBA_CACHE_DIR"])
    """
    out = _run(code, {"XDG_CACHE_HOME": str(cache), "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}, tmp_path)
    assert Path(out.strip()) == cache / "bgbot" / "numba"
    assert list((cache / "bgbot" / "numba").rglob("kern.add-*.nbi")), "no index of the compiled kernel there"
    assert not (tmp_path / "__pycache__").exists() or not list((tmp_path / "__pycache__").glob("*.nbi"))


def test_a_two_ply_question_runs_as_plain_python_until_the_kernels_are_cached(tmp_path: Path) -> None:
    code = """
        import sys
        from bgbot import jit
        from bgbot.cli.warmup import choose_kernels
        if sys.argv[-1] == "mark":
            jit.mark_cached()
        else:
            choose_kernels(int(sys.argv[-1]))
            print(jit.COMPILED, jit.kernels_cached())
    """
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}

    def run(arg: str) -> str:
        clean = {k: v for k, v in os.environ.items() if k not in ("BGBOT_JIT",)}
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), arg], env={**clean, **env},
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run("1") == "False False"
    assert run("2") == "False False"  # nothing cached: plain Python, no 20-30 s of compiling
    run("mark")
    assert run("1") == "False True"
    assert run("2") == "True True"  # cached: the compiled kernels load in a second


def test_warm_up_with_plain_python_kernels_has_nothing_to_compile(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}, "BGBOT_JIT": "0",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bgbot.cli", "warm-up"], env=env, capture_output=True, text=True,
                          timeout=120, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "plain Python" in done.stderr and "numba" not in done.stdout


def test_a_bad_ply_is_reported_before_anything_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """`bgbot move ID 31 --ply 4` on a fresh install: one error line, not the warm-up's progress bar first."""
    from bgbot import jit
    from bgbot.cli import warmup

    warmed: list[int] = []
    monkeypatch.setattr(jit, "kernels_cached", lambda: False)
    monkeypatch.setattr(warmup, "ensure_warm", lambda progress=True: warmed.append(1))
    for bad in (0, 4, 99):
        warmup.choose_kernels(bad)
    assert warmed == []
    warmup.choose_kernels(3)
    assert warmed == [1]
