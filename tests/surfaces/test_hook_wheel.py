"""``INLINER_HOOK=pkg python ...`` straight after ``pip install``: the wheel ships the .pth.

The wheel is built from this checkout as a user's ``pip`` would (offline: ``pip wheel
--no-index --no-deps --no-build-isolation``, with the setuptools of this environment),
installed with ``--no-deps`` into a fresh virtual environment without pip, whose only
extra is a ``.pth`` naming this environment's site-packages (torch and libcst are not
installed again). That environment then imports a small package with and without the
variable set. The editable (PEP 660) wheel is checked to carry the same file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from inliner.hook._pth import PTH_LINE, SHIPPED_PTH_NAME
from tests.support.paths import ROOT

OPS = """\
import torch


class Seven(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        return g * 7  # deliberately not the true derivative


def f(x):
    return Seven.apply(x).sum()
"""

PROBE = """
import json, sys
import torch
from wheelpkg import ops
x = torch.zeros(2, requires_grad=True)
ops.f(x).backward()
inliner = sys.modules.get("inliner")
print(json.dumps({
    "flat": not isinstance(ops.Seven, type),
    "grad": x.grad.tolist(),
    "inliner": getattr(inliner, "__file__", None),
    "engine": "libcst" in sys.modules,
}))
"""


def _source_tree(destination: Path) -> Path:
    """What an sdist holds: the files the build reads, outside the checkout (no build/ left in it)."""
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, destination / name)
    shutil.copytree(ROOT / "inliner", destination / "inliner", ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def _can_build_wheels() -> str | None:
    """Why no wheel can be built offline here, or None."""
    try:
        import setuptools
    except ImportError:
        return "setuptools is not installed, and a wheel cannot be built offline without it"
    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    if (major, minor) < (70, 1):
        try:
            import wheel  # noqa: F401  (bdist_wheel before setuptools 70.1)
        except ImportError:
            return f"setuptools {setuptools.__version__} needs the 'wheel' package to build wheels"
    return None


def _dependency_roots() -> list[str]:
    """The sys.path entries this environment finds inliner's dependencies (and torch) in."""
    roots: list[str] = []
    for name in ("torch", "libcst", "black"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations, name
        root = str(Path(next(iter(spec.submodule_search_locations))).parent)
        if root not in roots:
            roots.append(root)
    return roots


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{cmd}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    why = _can_build_wheels()
    if why is not None:
        pytest.skip(why)
    work = tmp_path_factory.mktemp("wheel")
    (work / "src").mkdir()
    source = _source_tree(work / "src")
    dist = work / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-index", "--no-deps", "--no-build-isolation", "-q"]
        + ["--disable-pip-version-check", "-w", str(dist), str(source)],
        cwd=work,
    )
    (wheel,) = dist.glob("inliner-*.whl")

    venv = work / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    )
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "--no-deps", "-q"]
        + ["--disable-pip-version-check", str(wheel)],
        env=_clean_env(),  # no PYTHONPATH: pip must not find another inliner's metadata
    )
    # then torch, libcst, ... from this environment, after the fresh one's own site-packages
    # (written after the install, or pip would take this environment's inliner for installed)
    (purelib / "zz_outer_site.pth").write_text("".join(p + "\n" for p in _dependency_roots()))
    package = work / "user" / "wheelpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "ops.py").write_text(OPS)
    return {"wheel": wheel, "python": python, "purelib": purelib, "user": package.parent, "source": source}


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("INLINER_HOOK", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}


def _probe(built: dict[str, Path], hook: str | None) -> dict:
    env = _clean_env()
    env["PYTHONPATH"] = str(built["user"])  # the user's package only: inliner comes from the wheel
    if hook is not None:
        env["INLINER_HOOK"] = hook
    done = _run([str(built["python"]), "-c", PROBE], env=env, cwd=built["user"])
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_wheel_ships_the_pth_at_its_root(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        assert wheel.read(SHIPPED_PTH_NAME).decode("utf-8") == PTH_LINE
        record = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))).decode()
    assert any(line.startswith(SHIPPED_PTH_NAME + ",") for line in record.splitlines())  # pip uninstall removes it
    assert (built["purelib"] / SHIPPED_PTH_NAME).read_text(encoding="utf-8") == PTH_LINE


def test_installed_wheel_flattens_with_the_variable_and_costs_nothing_without(built: dict[str, Path]) -> None:
    on = _probe(built, hook="wheelpkg")
    assert on["flat"] is True, "INLINER_HOOK=wheelpkg right after pip install flattens the package"
    assert on["grad"] == [7.0, 7.0]  # the custom backward still runs
    assert on["inliner"] is not None and Path(on["inliner"]).is_relative_to(built["purelib"]), on["inliner"]

    off = _probe(built, hook=None)
    assert off == {"flat": False, "grad": [7.0, 7.0], "inliner": None, "engine": False}, "unset: inliner not imported"


def test_editable_wheel_ships_the_pth_too(built: dict[str, Path], tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        from setuptools import build_meta
        print(build_meta.build_editable({str(tmp_path)!r}))
        """
    )
    done = _run([sys.executable, "-c", code], cwd=built["source"])
    name = done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(tmp_path / name) as wheel:
        names = wheel.namelist()
        assert SHIPPED_PTH_NAME in names, names
        assert wheel.read(SHIPPED_PTH_NAME).decode("utf-8") == PTH_LINE
    # the editable wheel's own path hook sorts first, so inliner is importable when our line runs
    assert sorted(n for n in names if n.endswith(".pth"))[-1] == SHIPPED_PTH_NAME
