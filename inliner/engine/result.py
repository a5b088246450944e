"""What the engine is asked (``Selection``) and what it answers (``FlattenResult``).

A module of its own so the pipeline (``inliner.engine.rewrite``) can build results
without importing the entry point that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inliner.engine.analysis.compile_kind import CompileKind
from inliner.engine.diagnostics import Diagnostic


@dataclass(frozen=True)
class Selection:
    """Restrict the rewrite to one Function class (by name) or the class / op call on a line."""

    name: str | None = None
    line: int | None = None  # 1-based

    @classmethod
    def parse(cls, text: str) -> "Selection":
        """``Name``, ``PATH:LINE`` or ``LINE``."""
        head, sep, tail = text.rpartition(":")
        if sep and tail.isdigit():
            return cls(line=int(tail))
        if text.isdigit():
            return cls(line=int(text))
        return cls(name=text)


@dataclass(frozen=True)
class FlattenResult:
    source: str  # the new text (identical to the input when nothing changed)
    diagnostics: tuple[Diagnostic, ...] = ()
    flattened: tuple[str, ...] = ()  # names of the Functions / op calls rewritten
    refused: tuple[str, ...] = ()  # names of those left untouched, each with a diagnostic
    error: str | None = None  # set when the file could not be processed at all
    changed: bool = field(default=False)
    #: per flattened name, how torch.compile may treat it (inliner/engine/analysis/compile_kind.py)
    compile_kinds: tuple[tuple[str, CompileKind], ...] = ()
