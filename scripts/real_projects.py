"""Do real projects still pass their own tests once inliner has rewritten them?

For each pinned project below (pure-Python releases that define custom autograd
Functions and ship their test suites in the source distribution), this script:

1. downloads the sdist from PyPI once into ``--cache`` and checks PyPI's sha256
   (``census.py``'s download code);
2. unpacks two copies, ``original/`` and ``rewritten/``, and runs
   ``python -m inliner <rewritten>/<package>/`` (the engine of this checkout) on the second;
3. installs each copy (``--no-deps``) into its own virtual environment, which sees this
   interpreter's packages (torch is never installed again: every pip call takes the
   repository's ``constraints.txt``) and gets only the project's light dependencies;
4. runs the same bounded subset of the project's own tests (those that exercise its
   Functions, a few minutes on CPU) against each install, from a copy of the sdist
   without the package, so the tests import the installed copy;
5. prints, per project, passed/failed/errors/skipped on the original and the rewrite,
   and every test whose outcome differs, with the first line of its error; each of those
   runs again ``--reruns`` times on every side, and one whose outcome changes between runs
   of one side is marked flaky (exit 1 if a test differs on every run).

``--hook`` adds a third side: the original install run with ``INLINER_HOOK=<package>``
(the import hook flattens it in memory; its start-up line written by this checkout).

The rewritten copy imports ``inliner.runtime`` from this checkout (``PYTHONPATH``).
Not run in CI: it downloads from PyPI. Unpacked trees, venvs and JUnit reports stay
under ``--cache`` (default ``~/.cache/inliner-realproj``) to read after a run.
Run one project at a time on a small machine; each takes a few minutes.

Usage: python scripts/real_projects.py [--cache DIR] [--timeout S] [PROJECT ...]
"""

from __future__ import annotations

import argparse
import ast
import collections
import inspect
import json
import os
import shutil
import site
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

from census import _download

REPO = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO / "constraints.txt"
SIDES = ("original", "rewritten")
HOOKED = "hooked"  # the original, flattened in memory by the import hook (``--hook``)

#: Run in each venv: where the package comes from, and how many Functions its modules still define.
PROBE = """
import importlib, pkgutil, sys, torch
package = importlib.import_module(sys.argv[1])
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    try:
        importlib.import_module(info.name)
    except Exception:
        pass
modules = [m for name, m in list(sys.modules.items()) if name.split(".")[0] == package.__name__]
functions = {
    value for m in modules for value in vars(m).values()
    if isinstance(value, type) and issubclass(value, torch.autograd.Function) and value.__module__ == m.__name__
}
print(f"{package.__file__}: {len(functions)} Function classes; torch {torch.__version__} {torch.__file__}")
"""


@dataclass(frozen=True)
class Project:
    """A pinned release, where its package lies in the sdist, and which tests to run."""

    name: str
    version: str
    package: str
    tests: tuple[str, ...]
    requires: tuple[str, ...] = ()


#: Chosen for the Functions they define and a test suite that runs on CPU from the sdist.
PROJECTS: tuple[Project, ...] = (
    Project(
        "linear-operator",
        "0.6.1",
        "linear_operator",
        (
            "test/functions",
            "test/operators/test_dense_linear_operator.py",
            "test/operators/test_chol_linear_operator.py",
        ),
        ("scipy==1.17.1",),
    ),
    Project(
        "gpytorch",
        "1.15.2",
        "gpytorch",
        (
            "test/functions",
            "test/variational/test_natural_variational_distribution.py",
            "test/variational/test_ciq_variational_strategy.py",
            "test/variational/test_large_batch_variational_strategy.py",
            "test/variational/test_variational_strategy.py",
            "test/examples/test_simple_gp_regression.py",
        ),
        ("linear-operator==0.6.1", "scipy==1.17.1", "scikit-learn==1.8.0"),
    ),
    Project(
        "torchkbnufft",
        "1.5.2",
        "torchkbnufft",
        ("tests/test_interp.py", "tests/test_nufft.py", "tests/test_sense_nufft.py", "tests/test_toep.py"),
        ("scipy==1.17.1",),
    ),
)


@dataclass
class Outcomes:
    """One side's test results: outcome and first error line by test id."""

    outcome: dict[str, str] = field(default_factory=dict)
    first_line: dict[str, str] = field(default_factory=dict)
    note: str = ""


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def _unpack(archive: Path, into: Path) -> Path:
    """The sdist's root directory, unpacked afresh under ``into``."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    with tarfile.open(archive) as bundle:
        bundle.extractall(into, filter="data")
    (root,) = into.iterdir()
    return root


def _rewrite(tree: Path, package: str) -> str:
    """Run inliner's command line on the package, as a user would; its summary line."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = _run([sys.executable, "-m", "inliner", "-v", f"{tree / package}/"], env=env, cwd=tree)
    if proc.returncode not in (0, 1):  # 1: some classes were refused
        raise RuntimeError(f"inliner failed on {tree / package}:\n{proc.stderr}")
    lines = (proc.stdout + proc.stderr).splitlines()
    flattened = sum(" INL001 " in line for line in lines)
    refused = sum(": INL" in line and " INL001 " not in line for line in lines)
    return f"{flattened} flattened, {refused} other diagnostics"


def _strings(source: str) -> tuple[set[str], collections.Counter[str]]:
    """Values of the string statements in a module (as ``inspect.cleandoc`` gives them, what
    ``help()`` shows: a docstring moved to another indentation keeps that value, as
    docs/flattening.md promises), and of those that are not a docstring."""
    values: set[str] = set()
    loose: collections.Counter[str] = collections.Counter()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):  # a lambda's body is an expression
            continue
        documented = isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        for index, statement in enumerate(body):
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                if isinstance(statement.value.value, str):
                    value = inspect.cleandoc(statement.value.value)
                    values.add(value)
                    loose[value] += index > 0 or not documented
    return values, loose


def _text_changes(before: Path, after: Path) -> list[str]:
    """Docstrings whose value the rewrite changed, and docstrings it left as bare string statements.

    The user's text must survive a move (issue 26): a docstring keeps its value, and stays a docstring.
    """
    found = []
    for old in sorted(before.rglob("*.py")):
        new = after / old.relative_to(before)
        if old.read_bytes() == new.read_bytes():
            continue
        (old_values, old_loose), (new_values, new_loose) = _strings(old.read_text()), _strings(new.read_text())
        where = new.relative_to(after.parent)
        for value in sorted(new_values - old_values):
            found.append(f"{where}: a docstring's value changed: {value[:60]!r}")
        for value in sorted((new_loose - old_loose).elements()):
            found.append(f"{where}: a docstring became a bare string statement: {value[:60]!r}")
    return found


def _venv(path: Path, project: Project, side: str) -> Path:
    """A venv that sees this interpreter's packages (torch among them), with the project's extras."""
    python = path / "bin" / "python"
    if not python.exists():
        _check(_run([sys.executable, "-m", "venv", "--without-pip", str(path)]))
        # A venv made from a venv sees the base interpreter, not ours: point it at ours.
        target = Path(_run([str(python), "-c", "import site; print(site.getsitepackages()[0])"]).stdout.strip())
        (target / "_inliner_parent.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    if project.requires:
        _pip(python, *project.requires)
    if side == HOOKED:  # the start-up line that reads INLINER_HOOK, written by this checkout
        site_dir = _run([str(python), "-c", "import site; print(site.getsitepackages()[0])"]).stdout.strip()
        _check(_run([str(python), "-m", "inliner.hook", "install-pth", "--dir", site_dir], env=_test_env(side, "")))
    return python


def _pip(python: Path, *args: str) -> None:
    command = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "-c", str(CONSTRAINTS)]
    _check(_run(command + list(args)))


def _check(proc: subprocess.CompletedProcess) -> None:
    if proc.returncode:
        raise RuntimeError(f"{' '.join(proc.args)} failed:\n{proc.stdout}\n{proc.stderr}")


def _install(python: Path, tree: Path, package: str, side: str) -> str:
    """Install the copy, not editable; what the probe then finds (see ``PROBE``)."""
    _pip(python, "--no-deps", "--force-reinstall", "--no-cache-dir", str(tree))
    proc = _run([str(python), "-c", PROBE, package], cwd="/", env=_test_env(side, package))
    _check(proc)
    return proc.stdout.strip()


def _test_env(side: str, package: str) -> dict[str, str]:
    """The rewrite imports ``inliner.runtime``: this checkout's, on every side alike."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0", "CUDA_VISIBLE_DEVICES": ""}
    env.pop("INLINER_HOOK", None)
    if side == HOOKED:
        env["INLINER_HOOK"] = package
    return env


def _test_tree(tree: Path, package: str, into: Path) -> Path:
    """The sdist without its package, so the tests import what was installed."""
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(tree, into, ignore=shutil.ignore_patterns(package, "*.egg-info", "build"))
    return into


def _pytest(
    python: Path, tests: Path, targets: list[str], env: dict[str, str], report: Path, timeout: float
) -> Outcomes:
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"]
    report.unlink(missing_ok=True)
    try:
        proc = _run(command + targets, cwd=tests, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcomes(note=f"timed out after {timeout:.0f} s")
    if not report.exists():
        return Outcomes(note=f"pytest wrote no report (exit {proc.returncode}): {proc.stdout[-400:]}")
    return _read_junit(report)


def _read_junit(report: Path) -> Outcomes:
    """Outcome of every test case; the first line of a failure's message."""
    found = Outcomes()
    for case in ElementTree.parse(report).iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        outcome, line = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = child.get("message") or child.text or ""
                line = message.strip().splitlines()[0] if message.strip() else ""
                break
        found.outcome[test] = outcome
        found.first_line[test] = line
    return found


def _node_id(tests: Path, test: str) -> str:
    """The pytest node id of a JUnit ``classname::name`` (the classname is module path and classes)."""
    classname, name = test.split("::", 1)
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (tests / path).is_file():
            return "::".join([path.as_posix(), *parts[cut:], name])
    return test


def _rerun(result: dict, runs: dict[str, tuple[Path, Path]], project: Project, reruns: int, timeout: float) -> None:
    """Run every test whose outcome differs again on each side: a flaky test changes outcome on one side."""
    sides = result["sides"]
    differ = [t for t in _all_tests(*sides.values()) if len({d["outcome"].get(t) for d in sides.values()}) > 1]
    for side, (python, tests) in runs.items():
        sides[side]["reruns"] = {test: [] for test in differ}
        if not differ:
            continue
        targets = [_node_id(tests, test) for test in differ]
        for count in range(reruns):
            report = tests.parent / f"{side}-rerun{count}-junit.xml"
            again = _pytest(python, tests, targets, _test_env(side, project.package), report, timeout)
            for test in differ:
                sides[side]["reruns"][test].append(again.outcome.get(test, "absent"))


def _one(project: Project, cache: Path, timeout: float, sides: tuple[str, ...], reruns: int) -> dict:
    """Rewrite, install and test one project on each side; what was found."""
    archive = _download(project.name, project.version, cache, sdist=True)
    work = cache / "work" / f"{project.name}-{project.version}"
    result: dict = {"project": project.name, "version": project.version, "sides": {}}
    runs: dict[str, tuple[Path, Path]] = {}
    trees: dict[str, Path] = {}
    for side in sides:
        started = time.monotonic()
        tree = trees[side] = _unpack(archive, work / side)
        if side == "rewritten":
            result["rewrite"] = _rewrite(tree, project.package)
            result["text"] = _text_changes(trees["original"] / project.package, tree / project.package)
        python = _venv(cache / "venvs" / f"{project.name}-{project.version}-{side}", project, side)
        where = _install(python, tree, project.package, side)
        tests = _test_tree(tree, project.package, work / f"{side}-tests")
        env = _test_env(side, project.package)
        outcomes = _pytest(python, tests, list(project.tests), env, work / f"{side}-junit.xml", timeout)
        runs[side] = (python, tests)
        result["sides"][side] = {
            "outcome": outcomes.outcome,
            "first_line": outcomes.first_line,
            "note": outcomes.note,
            "imported": where,
            "seconds": round(time.monotonic() - started),
        }
        print(
            f"{project.name} {side}: {len(outcomes.outcome)} tests in {result['sides'][side]['seconds']} s",
            file=sys.stderr,
            flush=True,
        )
    _rerun(result, runs, project, reruns, timeout)
    (work / "result.json").write_text(json.dumps(result, indent=1))
    return result


KINDS = ("passed", "failed", "error", "skipped")


def _report(result: dict) -> str:
    """The side-by-side table, what each side imported, and every test whose outcome differs."""
    sides = result["sides"]
    lines = [f"{result['project']} {result['version']}: the command line {result.get('rewrite', '')}"]
    lines.append(f"  {'':10} {'passed':>7} {'failed':>7} {'errors':>7} {'skipped':>7} {'seconds':>8}")
    for side, data in sides.items():
        counts = [sum(1 for o in data["outcome"].values() if o == kind) for kind in KINDS]
        lines.append(f"  {side:10} " + " ".join(f"{n:7}" for n in counts) + f" {data['seconds']:8}")
    for side, data in sides.items():
        lines.append(f"  {side} imported {data['imported']}")
        if data["note"]:
            lines.append(f"  {side}: {data['note']}")
    lines.append(f"  text the rewrite changed: {len(result.get('text', []))}")
    lines += [f"    {line}" for line in result.get("text", [])]
    original = sides["original"]
    for side, data in sides.items():
        if side == "original":
            continue
        differ = [t for t in _all_tests(original, data) if original["outcome"].get(t) != data["outcome"].get(t)]
        flaky = [t for t in differ if _flaky(original, t) or _flaky(data, t)]
        lines.append(f"  tests whose outcome differs, original -> {side}: {len(differ)} ({len(flaky)} flaky)")
        for test in differ:
            before, after = original["outcome"].get(test, "absent"), data["outcome"].get(test, "absent")
            why = data["first_line"].get(test) or original["first_line"].get(test, "")
            lines.append(f"    {test}: {before} -> {after}  {why}")
            label = "FLAKY" if test in flaky else "every run"
            first, then = (", ".join(d.get("reruns", {}).get(test, [])) for d in (original, data))
            lines.append(f"      {label}; reruns: original {first}; {side} {then}")
    return "\n".join(lines)


def _all_tests(*sides: dict) -> list[str]:
    return sorted({test for side in sides for test in side["outcome"]})


def _flaky(side: dict, test: str) -> bool:
    return len({side["outcome"].get(test, "absent"), *side.get("reruns", {}).get(test, [])}) > 1


def _differs(result: dict) -> bool:
    """Whether a test differs on every run, or a side did not finish."""
    sides = list(result["sides"].values())
    steady = [t for t in _all_tests(*sides) if not any(_flaky(d, t) for d in sides)]
    differ = any(len({d["outcome"].get(t) for d in sides}) > 1 for t in steady)
    return differ or any(d["note"] for d in sides)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("projects", nargs="*", help="only these projects (PyPI names)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "inliner-realproj")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for one side's tests")
    parser.add_argument("--hook", action="store_true", help="also run the original under INLINER_HOOK=<package>")
    parser.add_argument("--reruns", type=int, default=2, help="runs again of each test whose outcome differs")
    args = parser.parse_args(argv)
    chosen = [p for p in PROJECTS if not args.projects or p.name in args.projects]
    sides = SIDES + ((HOOKED,) if args.hook else ())
    args.cache.mkdir(parents=True, exist_ok=True)
    differs = False
    for project in chosen:
        result = _one(project, args.cache, args.timeout, sides, args.reruns)
        print(_report(result), flush=True)
        differs |= _differs(result)
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main())
