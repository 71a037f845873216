"""The Pythons bgbot installs on: ``requires-python`` against the wheels its compiled dependencies ship.

No registry reachable here offers an interpreter other than the machine's own 3.11 (Debian bookworm packages
only 3.11; the PyPI and npm "portable Python" packages download their builds from elsewhere at install time), so
the suite itself runs on 3.11 only.  What can be checked for the other versions is that ``pip install`` of the
built wheel resolves every runtime dependency to a binary wheel for that Python: pip's resolver is asked with
``--dry-run --only-binary=:all: --python-version 3.X``, exactly as a user on that Python would be answered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
# every CPython minor released to date that numba, llvmlite and numpy ship wheels for
SUPPORTED = ("3.11", "3.12", "3.13", "3.14")
RUNTIME = {"numpy", "numba", "llvmlite", "tqdm", "matplotlib"}


def _requires_python() -> SpecifierSet:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return SpecifierSet(tomllib.load(f)["project"]["requires-python"])


def _index_reachable() -> str | None:
    """None when the package index answers, else why not (the only reason the resolver test may skip)."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        with urllib.request.urlopen(f"{index}/numba/", timeout=15) as r:
            r.read(1)
    except (urllib.error.URLError, OSError) as e:
        return f"{index} unreachable: {e}"
    return None


def test_requires_python_allows_every_supported_version() -> None:
    spec = _requires_python()
    for v in SUPPORTED:
        assert spec.contains(v), f"requires-python {spec} refuses Python {v}, which numba and numpy support"
    assert not spec.contains("3.10"), "numpy 2.x and the code (tomllib, typing) need 3.11"


def test_classifiers_name_the_supported_versions() -> None:
    with open(ROOT / "pyproject.toml", "rb") as f:
        classifiers = set(tomllib.load(f)["project"]["classifiers"])
    for v in SUPPORTED:
        assert f"Programming Language :: Python :: {v}" in classifiers


@pytest.mark.slow
def test_wheel_resolves_on_every_supported_python(tmp_path: Path) -> None:
    why = _index_reachable()
    if why is not None:
        pytest.skip(why)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    build = subprocess.run([*pip, "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("bgbot-*.whl")
    failures: list[str] = []
    for v in SUPPORTED:
        report = tmp_path / f"report-{v}.json"
        r = subprocess.run([*pip, "install", "--dry-run", "--ignore-installed", "--only-binary=:all:",
                            "--python-version", v, "--target", str(tmp_path / f"t{v}"),
                            "--report", str(report), "-q", str(wheel)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            failures.append(f"Python {v}: " + "\n".join(ln for ln in r.stderr.splitlines() if "WARNING" not in ln))
            continue
        got = {i["metadata"]["name"].lower(): i for i in json.loads(report.read_text())["install"]}
        missing = RUNTIME - got.keys()
        if missing:
            failures.append(f"Python {v}: resolved without {sorted(missing)}")
        tag = "cp" + v.replace(".", "")
        for name in ("numpy", "numba", "llvmlite"):
            url = got[name]["download_info"]["url"] if name in got else ""
            if f"-{tag}-" not in url:
                failures.append(f"Python {v}: {name} resolved to {url!r}, not a {tag} wheel")
    assert not failures, "\n".join(failures)
