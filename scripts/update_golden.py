"""Regenerate golden/<case>/output.py and diagnostics.txt from the engine; review with `git diff golden/`.

Usage: python scripts/update_golden.py [CASE ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.golden import case_dirs, render


def main(argv: list[str]) -> int:
    wanted = set(argv)
    for case in case_dirs():
        if wanted and case.name not in wanted:
            continue
        output, diagnostics = render(case)
        (case / "output.py").write_text(output)
        (case / "diagnostics.txt").write_text(diagnostics)
        print(f"updated {case.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
