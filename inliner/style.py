"""The project's line length, as its formatter is configured: the width of the lines the engine writes.

The engine keeps the user's lines as written and formats only its own (``flatten``'s
``line_length``); the surfaces pass the width the project's formatter uses, so those
lines read like the rest of the file. Found from the file's directory upward, as black
and ruff find their configuration: the nearest directory with a ``pyproject.toml``
holding ``[tool.black]`` or ``[tool.ruff]`` (or a ``line-length`` in ``[tool.inliner]``,
which comes first), or with a ``ruff.toml`` or ``.ruff.toml``, decides (its
``line-length``, black's table before ruff's, else black's default of 88); the
search stops at a directory holding ``.git`` or ``.hg``. A file that cannot be read or
a value that is not a positive integer counts as no setting: a style is never worth
failing a rewrite.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_LINE_LENGTH = 88  # black's, and ruff's formatter's

_FILES = ("pyproject.toml", "ruff.toml", ".ruff.toml")


def find_line_length(path: str | Path | None) -> int:
    """The line length of the project the file ``path`` belongs to (88 when it says none)."""
    if not path:
        return DEFAULT_LINE_LENGTH
    for config, stamp in configs_upward(path, _FILES):
        decided = _setting_of(str(config), stamp)
        if decided is not None:
            return decided[0] or DEFAULT_LINE_LENGTH
    return DEFAULT_LINE_LENGTH


def configs_upward(path: str | Path, names: tuple[str, ...]) -> Iterator[tuple[Path, int]]:
    """The files called ``names`` from the directory of the file ``path`` up, nearest first
    (in ``names`` order within a directory), each with its modification stamp (a cache
    key); not above a directory holding ``.git`` or ``.hg``, as black and ruff look."""
    try:
        directory = Path(path).resolve().parent
    except OSError:
        return
    for candidate in (directory, *directory.parents):
        for name in names:
            config = candidate / name
            if config.is_file():
                yield config, _stamp(config)
        if (candidate / ".git").exists() or (candidate / ".hg").is_dir():
            return


def _stamp(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


@functools.lru_cache(maxsize=64)
def _setting_of(config: str, stamp: int) -> tuple[int | None] | None:
    """``(line length or None)`` when the file configures black or ruff; None when it does not."""
    data = _toml(config)
    if data is None:
        return None
    if Path(config).name != "pyproject.toml":
        return (_positive(data.get("line-length")),)
    tool = data.get("tool")
    own = tool.get("inliner") if isinstance(tool, dict) else None
    own_length = _positive(own.get("line-length")) if isinstance(own, dict) else None
    if own_length is not None:
        return (own_length,)
    found = [tool.get(name) for name in ("black", "ruff")] if isinstance(tool, dict) else []
    tables: list[dict[str, Any]] = [t for t in found if isinstance(t, dict)]
    if not tables:
        return None
    return (next((n for n in (_positive(t.get("line-length")) for t in tables) if n is not None), None),)


def _toml(config: str) -> dict[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            return None
    try:
        with open(config, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return None


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
