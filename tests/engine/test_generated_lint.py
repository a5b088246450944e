"""The rewrite adds no lint: ruff finds nothing in a golden output that it did not find in its input.

Checked: unused imports, locals and unpacked names (F401, F841, RUF059), redefinitions (F811), undefined names
(F821, F823), imports below code (E402), import blocks isort would reorder (I001),
trailing whitespace (W291, W293) and pycodestyle's blank lines around definitions (E301-E306,
preview rules in ruff).
Findings are compared by code and message, line numbers aside: an input's own findings
may stay, the rewrite may not add one. Each file is checked alone in a fresh directory
under the same name, so ``inliner`` is a third-party package there, as in a user's project.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.golden import case_dirs

RULES = "F401,F811,F821,F823,F841,RUF059,E402,I001,W291,W293,E301,E302,E303,E304,E305,E306"
CASES = case_dirs()

Finding = tuple[str, str]  # (code, message)


def _ruff_findings(root: Path) -> dict[str, collections.Counter[Finding]]:
    """Findings per file (path relative to ``root``) of one ruff run over ``root``."""
    command = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--exit-zero"]
    command += ["--preview", "--select", RULES, "--output-format", "json", "."]
    try:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as exc:
        raise AssertionError(f"ruff failed (is the test extra installed?): {exc.stderr}") from exc
    found: dict[str, collections.Counter[Finding]] = collections.defaultdict(collections.Counter)
    for finding in json.loads(done.stdout):
        relative = Path(finding["filename"]).resolve().relative_to(root.resolve()).as_posix()
        found[relative][(finding["code"], finding["message"])] += 1
    return found


def added_findings(pairs: dict[str, tuple[str, str]], scratch: Path) -> dict[str, list[Finding]]:
    """For each name -> (original text, rewritten text): the findings the rewrite added."""
    for name, (original, rewritten) in pairs.items():
        for side, text in (("original", original), ("rewritten", rewritten)):
            folder = scratch / side / name
            folder.mkdir(parents=True)
            (folder / "module.py").write_text(text)
    found = _ruff_findings(scratch)
    added = {}
    for name in pairs:
        new = found[f"rewritten/{name}/module.py"] - found[f"original/{name}/module.py"]
        added[name] = sorted(new.elements())
    return added


@pytest.fixture(scope="module")
def golden_added(tmp_path_factory) -> dict[str, list[Finding]]:
    pairs = {case.name: ((case / "input.py").read_text(), (case / "output.py").read_text()) for case in CASES}
    return added_findings(pairs, tmp_path_factory.mktemp("lint"))


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_rewrite_adds_no_lint(case, golden_added):
    assert golden_added[case] == []


def test_added_findings_are_seen(tmp_path):
    """The comparison reports what a careless rewrite would leave, and only that."""
    original = "import os\nimport sys\n\nprint(os.sep, sys.argv)\n"
    careless = "from inliner.runtime import custom_vjp\nimport os\nimport sys\n\ndef f():\n    unused = 1\n\n\nprint(sys.argv, custom_vjp)\n"
    added = added_findings({"careless": (original, careless)}, tmp_path)["careless"]
    assert [code for code, _ in added] == ["E302", "F401", "F841", "I001"], added


def test_findings_already_in_the_original_are_not_added(tmp_path):
    original = "import os\nimport sys\n\n\ndef f():\n    x = 1\n"
    rewritten = "import os\nimport sys\n\n\ndef g():\n    y = 1\n"  # same kinds of finding, other names
    added = added_findings({"same": (original, original), "renamed": (original, rewritten)}, tmp_path)
    assert added["same"] == []
    assert [code for code, _ in added["renamed"]] == ["F841"]  # the message names the local
