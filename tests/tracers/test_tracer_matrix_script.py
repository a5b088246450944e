"""scripts/tracer_matrix.py's thunder section: thunder on the original beside the rewrite."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tracer_matrix.py"


def _script():
    spec = importlib.util.spec_from_file_location("tracer_matrix_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUNS = {"ok": True, "reason": "", "na": False}
FAILS = {"ok": False, "reason": "InterpreterError: duplicate argument 't_0' in function definition", "na": False}
NA = {"ok": False, "reason": "n/a: the original is not an autograd.Function", "na": True}


def test_thunder_on_the_original_beside_the_rewrite():
    """Counts per thunder row, and a table row for every driver where either side fails
    under either row; drivers that run everywhere are counted only."""
    results = {
        "thunder_jit": {
            "both": {"original": RUNS, "rewritten": RUNS},
            "beyond": {"original": FAILS, "rewritten": RUNS},
            "dumped": {"original": NA, "rewritten": RUNS},
        },
        "thunderfx": {
            "both": {"original": RUNS, "rewritten": RUNS},
            "beyond": {"original": FAILS, "rewritten": FAILS},
            "dumped": {"original": NA, "rewritten": RUNS},
        },
    }
    text = "\n".join(_script()._thunder_beside_original(results))
    assert "- `thunder.jit`: fails the original and runs the rewrite on 1 of 2 drivers" in text
    assert "runs both on 1; fails both on 0; runs only the original on 0." in text
    assert "- `thunderfx`: fails the original and runs the rewrite on 0 of 2 drivers" in text
    one = "thunder: one tensor passed for two parameters"
    assert f"| `beyond` | fails: {one} | runs | fails: {one} | fails: {one} |" in text
    assert "| `dumped` | n/a | runs | n/a | runs |" in text
    assert "`both`" not in text and "The other 1 drivers run under every thunder row" in text


def test_no_thunder_section_without_thunder_rows():
    assert _script()._thunder_beside_original({"eager": {"both": {"original": RUNS, "rewritten": RUNS}}}) == []
