"""Where the golden cases live and how their expected files are produced (shared by tests and scripts)."""

from __future__ import annotations

from pathlib import Path

from inliner import flatten
from tests.support.paths import GOLDEN


def case_dirs() -> list[Path]:
    return sorted(p for p in GOLDEN.iterdir() if (p / "input.py").is_file())


def render(case: Path) -> tuple[str, str]:
    """(expected output text, expected diagnostics text) for a case, as the engine makes them now."""
    source = (case / "input.py").read_text()
    result = flatten(source, path="input.py")
    diagnostics = "".join(d.format() + "\n" for d in result.diagnostics)
    return result.source, diagnostics


# -- Python side effects -------------------------------------------------------------------
#
# A golden module whose Functions change Python state (a module-level list, a counter on a
# state object, a list passed in) defines two functions at module level:
#
#   side_effect_log() -> list     a snapshot of everything its Functions changed, comparable
#                                 with tests/harness.assert_same (tensors by value);
#   reset_side_effects() -> None  put that state back as it was at import.
#
# A check resets the original and the rewritten module, makes the same calls on both (the
# scenarios in eager here; three compiled calls in a tracer row) and compares the logs. A
# dumped graph's reference.py defines them too, for the eager code it stands for.

SIDE_EFFECT_LOG = "side_effect_log"
RESET_SIDE_EFFECTS = "reset_side_effects"


def side_effects(module):
    """``(reset, log)`` of a case module that records its side effects, else None."""
    log = getattr(module, SIDE_EFFECT_LOG, None)
    reset = getattr(module, RESET_SIDE_EFFECTS, None)
    if log is None and reset is None:
        return None
    assert callable(log) and callable(reset), (
        f"{module.__name__} defines only one of {SIDE_EFFECT_LOG}/{RESET_SIDE_EFFECTS}"
    )
    return reset, log
