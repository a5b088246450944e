"""What a project says about compile kinds: a pragma comment, or ``compile`` in ``[tool.inliner]``.

The classifier (``inliner/compile_kind.py``) is conservative; a project that knows
better says so, per class or op call:

- a pragma on the class line, or on a line of the op call::

      class Gather(torch.autograd.Function):  # inliner: compile=traceable

- a table in ``pyproject.toml`` mapping qualified names (``module.Class``, or
  ``module.function.<locals>.Class`` for a class defined in a function, or for an op
  call the flat function's name) to kinds; keys may be glob patterns (``*`` matches any
  run of characters, dots included)::

      [tool.inliner.compile]
      "mypkg.ops.Gather" = "traceable"
      "mypkg.kernels.*" = "opaque"

A pragma wins over the table; in the table an exact key wins over patterns, and a
longer pattern over a shorter one. A value other than ``traceable``, ``opaque`` or
``side_effecting`` (``side-effecting`` too) is a configuration error in the table and
a warning diagnostic (INL300) for a pragma, which is then ignored.
"""

from __future__ import annotations

import fnmatch
import functools
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inliner.engine.analysis.compile_kind import KINDS, CompileKind
from inliner.project_sources import ProjectSources
from inliner.style import DEFAULT_LINE_LENGTH, configs_upward, find_line_length

_PRAGMA = re.compile(r"#\s*inliner\s*:(.*)$")
_DIRECTIVE = re.compile(r"\s*([A-Za-z_][\w-]*)\s*=\s*([^\s,]*)\s*")
_KEY = re.compile(r"^[\w.*?\[\]<>-]+$")


def normalize_kind(value: str) -> str | None:
    """``side-effecting`` -> ``side_effecting``; None for anything that is not a kind."""
    kind = value.strip().replace("-", "_")
    return kind if kind in KINDS else None


def _expected() -> str:
    return ", ".join(KINDS)


# -- pragma comments ------------------------------------------------------------------------


@dataclass(frozen=True)
class Pragma:
    kind: str | None  # None: no usable pragma
    line: int = 0  # 1-based line of the comment (0: none)
    column: int = 0  # 0-based character column of the comment
    problems: tuple[str, ...] = ()  # what was wrong with it, for an INL300 warning


def find_pragma(span: list[str], first: int) -> Pragma:
    """The ``# inliner: ...`` comment among the lines ``span``, the first of which is line ``first``."""
    if not any("inliner" in line for line in span):
        return Pragma(None)
    found: Pragma = Pragma(None)
    for line, column, text in _comments(span, first):
        match = _PRAGMA.match(text)
        if match is None:
            continue
        found = _parse_directives(match.group(1), line, column)
    return found


def _comments(span: list[str], first: int) -> list[tuple[int, int, str]]:
    """(line, column, text) of each comment token in ``span``; a span cut mid-statement
    still yields the comments before the point where tokenizing gives up."""
    text = "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in span)
    out = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                out.append((first + token.start[0] - 1, token.start[1], token.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _parse_directives(text: str, line: int, column: int) -> Pragma:
    kind = None
    problems = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = _DIRECTIVE.fullmatch(part)
        if match is None:
            problems.append(f"`{part}` is not `key=value`")
            continue
        key, value = match.group(1), match.group(2)
        if key != "compile":
            problems.append(f"unknown key `{key}` (the only one is `compile`)")
            continue
        normalized = normalize_kind(value)
        if normalized is None:
            problems.append(f"`compile={value}` is not one of {_expected()}")
            continue
        kind = normalized
    if not kind and not problems:
        problems.append("it says nothing (expected `# inliner: compile=<kind>`)")
    return Pragma(kind, line, column, tuple(problems))


# -- [tool.inliner] compile -------------------------------------------------------------------


@dataclass(frozen=True)
class CompileOverrides:
    """``[tool.inliner.compile]``: (pattern, kind) pairs in file order."""

    entries: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_table(cls, value: Any, where: str = "[tool.inliner] compile") -> CompileOverrides:
        """Validate a TOML value; raises ValueError naming the bad key or value."""
        if not isinstance(value, dict):
            raise ValueError(f'{where} must be a table of "module.Class" = "<kind>", not {type(value).__name__}')
        entries = []
        for key, kind in value.items():
            if not isinstance(key, str) or not _KEY.match(key):
                raise ValueError(
                    f'{where}: {key!r} is not a qualified name or pattern (like "pkg.module.Class" or "pkg.*")'
                )
            normalized = normalize_kind(kind) if isinstance(kind, str) else None
            if normalized is None:
                raise ValueError(f"{where}: {key!r} = {kind!r} is not one of {_expected()}")
            entries.append((key, normalized))
        return cls(tuple(entries))

    def lookup(self, qualified: str) -> tuple[str, str] | None:
        """(kind, key) of the entry that applies to ``qualified``, or None."""
        best: tuple[int, int, str, str] | None = None
        for order, (key, kind) in enumerate(self.entries):
            if key == qualified:
                rank = (1, len(key))
            elif fnmatch.fnmatchcase(qualified, key):
                rank = (0, len(key))
            else:
                continue
            candidate = (rank[0] * 10**6 + rank[1], order, kind, key)
            if best is None or candidate[:2] >= best[:2]:
                best = candidate
        return None if best is None else (best[2], best[3])

    def __bool__(self) -> bool:
        return bool(self.entries)


def decide(inferred: CompileKind, pragma: Pragma, config: tuple[str, str] | None) -> CompileKind:
    """The kind that is emitted: the pragma's, else the table's, else the inferred one.

    An override keeps the inferred reason in its own (so an eager island still says what
    the engine saw), and says where it came from."""
    if pragma.kind is not None:
        return _override(inferred, pragma.kind, "pragma", f"set by the pragma on line {pragma.line}")
    if config is not None:
        kind, key = config
        return _override(inferred, kind, "config", f'set by "{key}" in [tool.inliner] compile')
    return inferred


def _override(inferred: CompileKind, kind: str, origin: str, said: str) -> CompileKind:
    if kind == inferred.kind:
        return CompileKind(kind, inferred.reason and f"{inferred.reason}; {said}", origin)
    seen = f"; the engine found: {inferred.reason}" if inferred.reason else ""
    return CompileKind(kind, f"{said}{seen}", origin)


# -- which module a file is -------------------------------------------------------------------


def module_name(path: str | Path) -> str | None:
    """``pkg.sub.mod`` for ``.../pkg/sub/mod.py`` (packages are directories with ``__init__.py``)."""
    file = Path(path)
    if file.suffix != ".py":
        return None
    try:
        file = file.resolve()
    except OSError:
        return None
    parts = [] if file.stem == "__init__" else [file.stem]
    directory = file.parent
    while (directory / "__init__.py").is_file() and directory.name:
        parts.insert(0, directory.name)
        directory = directory.parent
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


# -- finding the table for a file (the import hook, the language server) ---------------------


def find_compile_overrides(path: str | Path) -> CompileOverrides:
    """The ``[tool.inliner] compile`` table of the project ``path`` belongs to (empty if none).

    The project is found as the command line finds it: the nearest directory up from the
    file with a ``pyproject.toml`` holding ``[tool.inliner]``, not above one holding
    ``.git`` or ``.hg``. Raises ValueError for an unreadable file or a bad table."""
    for pyproject, stamp in configs_upward(path, ("pyproject.toml",)):
        found = _table_of(str(pyproject), stamp)
        if found is not None:
            return found
    return CompileOverrides()


@functools.lru_cache(maxsize=64)
def _table_of(pyproject: str, stamp: int) -> CompileOverrides | None:
    """``compile`` of ``[tool.inliner]`` in that file (None: no ``[tool.inliner]``); cached per version."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            return None
    try:
        with open(pyproject, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{pyproject}: {exc}") from None
    tool = data.get("tool")
    table = tool.get("inliner") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    if "compile" not in table:
        return CompileOverrides()
    return CompileOverrides.from_table(table["compile"], f"{pyproject}: [tool.inliner] compile")


def engine_options(path: str | Path | None) -> dict[str, Any]:
    """``module``, ``compile_overrides``, ``line_length`` and ``sources`` (the project's
    other modules, ``inliner.project_sources``) for ``flatten`` on the file ``path``
    (None: none of them, and black's line length).

    For the surfaces that get one file at a time (the import hook, the language server,
    the LibCST codemod). Raises ValueError when the project's table is bad."""
    if not path or not Path(path).is_file():
        return {"module": None, "compile_overrides": None, "line_length": DEFAULT_LINE_LENGTH}
    module = module_name(path)
    return {
        "module": module,
        "compile_overrides": find_compile_overrides(path) or None,
        "line_length": find_line_length(path),
        "sources": ProjectSources.of_file(path, module),
    }
