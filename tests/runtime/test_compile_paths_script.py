"""``scripts/compile_paths.py`` (and so ``scripts/census.py --paths``) reports the path the
runtime gives each flat callable: every golden output, imported, agrees with the script."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch._dynamo  # noqa: F401  (the runtime sets .compile_path once dynamo is loaded)

from tests.support.golden import GOLDEN, case_dirs
from tests.support.harness import load_module

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compile_paths.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("compile_paths_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _flat_callables(module) -> dict:
    """name -> the module-level flat callables (a kept class's: its ``apply``)."""
    found = {}
    for value in list(vars(module).values()):
        flat = getattr(value, "apply", None) if isinstance(value, type) else value
        if hasattr(flat, "compile_path") and hasattr(flat, "carriers"):
            found[flat.__name__] = flat
    return found


def test_the_script_agrees_with_the_runtime_on_every_golden_output(script):
    compared = 0
    for case in case_dirs():
        module = load_module((case / "output.py").read_text(), case.name, case)
        reported = {f.name: f for f in script.paths_in((case / "input.py").read_text(), "input.py")}
        for name, flat in _flat_callables(module).items():
            if name not in reported:
                continue  # a name bound twice, or a callable the module imports
            assert reported[name].path == flat.compile_path, (case.name, name)
            if flat.compile_path == "island":
                assert reported[name].reason == script.island_reason(flat), (case.name, name)
            compared += 1
    assert compared > 150  # the golden outputs hold about 200 module-level flat callables
    assert {"graph", "split", "island"} <= {f.path for f in script.scan([GOLDEN]).found}
