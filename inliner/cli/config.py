"""``[tool.inliner]`` in ``pyproject.toml``: where the project root is and what it says.

The project root is the nearest directory, walking up from the common base of the
paths on the command line, that holds a ``.git`` or ``.hg`` directory or a
``pyproject.toml`` with a ``[tool.inliner]`` table (black's rule). When there is
none, the common base itself is the root. Keys are the long option names, spelled
with dashes or underscores; the command line overrides them. One key is no option:
``compile``, the table of compile kinds by qualified name (inliner/compile_overrides.py).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inliner.engine.analysis.compile_overrides import CompileOverrides

if sys.version_info >= (3, 11):
    import tomllib
else:
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        tomllib = None


class ConfigError(Exception):
    """The configuration file is unreadable or holds a value of the wrong type."""


#: options that may be set in [tool.inliner], by argparse dest, with their type
OPTION_TYPES: dict[str, type] = {
    "check": bool,
    "diff": bool,
    "color": bool,
    "fast": bool,
    "include": str,
    "exclude": str,
    "extend_exclude": str,
    "force_exclude": str,
    "jobs": int,
    "line_length": int,
    "quiet": bool,
    "verbose": bool,
}

#: options that only make sense for one run; a config file must not set them
COMMAND_LINE_ONLY = frozenset({"select", "stdin_filename", "config", "paths", "src", "version", "help"})


@dataclass(frozen=True)
class Config:
    path: Path | None
    values: dict[str, Any] = field(default_factory=dict)  # by argparse dest
    warnings: tuple[str, ...] = ()
    compile: CompileOverrides = field(default_factory=CompileOverrides)  # [tool.inliner] compile


def _load_toml(path: Path) -> dict[str, Any]:
    if tomllib is None:
        raise ConfigError(f"{path}: reading pyproject.toml needs Python 3.11 or the 'tomli' package")
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _tool_table(data: dict[str, Any]) -> dict[str, Any] | None:
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None
    table = tool.get("inliner")
    return table if isinstance(table, dict) else None


def _has_tool_inliner(pyproject: Path) -> bool:
    if tomllib is None:
        return False
    try:
        return _tool_table(_load_toml(pyproject)) is not None
    except ConfigError:
        return True  # stop here so the error is reported, not silently skipped


def find_project_root(srcs: list[str], stdin_filename: str | None = None) -> tuple[Path, str]:
    """Return the project root and why it is one (for ``-v``)."""
    if stdin_filename is not None:
        srcs = [stdin_filename if s == "-" else s for s in srcs]
    srcs = [s for s in srcs if s != "-"] or [os.getcwd()]
    paths = [Path(os.path.abspath(s)) for s in srcs]
    common = Path(os.path.commonpath([str(p) for p in paths]))
    for directory in (common, *common.parents):
        if (directory / ".git").exists():
            return directory, ".git directory"
        if (directory / ".hg").is_dir():
            return directory, ".hg directory"
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _has_tool_inliner(pyproject):
            return directory, "pyproject.toml with [tool.inliner]"
    base = common if common.is_dir() else common.parent
    return base, "common base directory of the given paths"


def _normalize(key: str) -> str:
    return key.replace("-", "_")


def load_config(path: Path) -> Config:
    """Read ``[tool.inliner]`` from ``path``; a file without that table is an empty config."""
    table = _tool_table(_load_toml(path))
    if table is None:
        return Config(path=None)
    values: dict[str, Any] = {}
    warnings: list[str] = []
    compile_table = CompileOverrides()
    for key, value in table.items():
        dest = _normalize(key)
        if dest == "compile":
            try:
                compile_table = CompileOverrides.from_table(value, f"{path}: [tool.inliner] compile")
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
            continue
        if dest in COMMAND_LINE_ONLY:
            warnings.append(f"{path}: [tool.inliner] cannot set {key!r} (command line only); ignored")
            continue
        expected = OPTION_TYPES.get(dest)
        if expected is None:
            warnings.append(f"{path}: unknown key {key!r} in [tool.inliner]; ignored")
            continue
        # bool is a subclass of int: `jobs = true` must not mean 1 job.
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(
                f"{path}: [tool.inliner] {key} must be {_type_name(expected)}, not {type(value).__name__}"
            )
        if expected is int and isinstance(value, int) and value < 1:
            raise ConfigError(f"{path}: [tool.inliner] {key} must be at least 1")
        values[dest] = value
    return Config(path=path, values=values, warnings=tuple(warnings), compile=compile_table)


def find_config(root: Path) -> Config:
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        if tomllib is None:
            return Config(path=None, warnings=(f"{pyproject}: not read; Python 3.10 needs the 'tomli' package",))
        return load_config(pyproject)
    return Config(path=None)


def _type_name(t: type) -> str:
    return {bool: "true or false", int: "an integer", str: "a string"}[t]
