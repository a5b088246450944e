"""``python -m inliner`` and the ``inliner`` console script."""

from __future__ import annotations

from inliner.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
