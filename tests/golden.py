"""Where the golden cases live and how their expected files are produced (shared by tests and scripts)."""

from __future__ import annotations

from pathlib import Path

from inliner import flatten

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def case_dirs() -> list[Path]:
    return sorted(p for p in GOLDEN.iterdir() if (p / "input.py").is_file())


def render(case: Path) -> tuple[str, str]:
    """(expected output text, expected diagnostics text) for a case, as the engine makes them now."""
    source = (case / "input.py").read_text()
    result = flatten(source, path="input.py")
    diagnostics = "".join(d.format() + "\n" for d in result.diagnostics)
    return result.source, diagnostics
