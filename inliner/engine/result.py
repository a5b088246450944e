"""What the engine is asked (``Selection``) and what it answers (``FlattenResult``).

A module of its own so the pipeline (``inliner.engine.rewrite``) can build results
without importing the entry point that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from inliner.engine.analysis.compile_kind import CompileKind
from inliner.engine.diagnostics import Diagnostic
from inliner.engine.line_origin import LineMap, Origin, line_map


@dataclass(frozen=True)
class Selection:
    """Restrict the rewrite to one Function class (by name) or the class / op call on a line."""

    name: str | None = None
    line: int | None = None  # 1-based

    @classmethod
    def parse(cls, text: str) -> Selection:
        """``Name``, ``PATH:LINE`` or ``LINE``."""
        return cls.parse_with_path(text)[0]

    @classmethod
    def parse_with_path(cls, text: str) -> tuple[Selection, str | None]:
        """The selection ``text`` names, and the file (``PATH`` of ``PATH:LINE``), if any."""
        head, sep, tail = text.rpartition(":")
        if sep and tail.isdigit():
            return cls(line=int(tail)), head or None
        if text.isdigit():
            return cls(line=int(text)), None
        return cls(name=text), None


@dataclass(frozen=True)
class TextEdit:
    """Replace ``input[start:end]`` (offsets into the input text) with ``text``."""

    start: int
    end: int
    text: str
    #: what generated ``text`` was made from (None: moved or spelled-anew input, or an import)
    origin: Origin | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Target:
    """A Function class or op call the engine looked at."""

    name: str  # the class name; for an op call, the flat function's name once flattened
    kind: str  # "class" | "call"
    first_line: int  # 1-based, decorators included
    last_line: int
    flattened: bool
    select: Selection  # asks ``flatten`` for this one alone
    diagnostic: Diagnostic  # what the engine said about it (INL001 when flattened)


@dataclass(frozen=True)
class FlattenResult:
    source: str  # the new text (identical to the input when nothing changed)
    diagnostics: tuple[Diagnostic, ...] = ()
    flattened: tuple[str, ...] = ()  # names of the Functions / op calls rewritten
    refused: tuple[str, ...] = ()  # names of those left untouched, each with a diagnostic
    error: str | None = None  # set when the file could not be processed at all
    changed: bool = field(default=False)
    edits: tuple[TextEdit, ...] = ()  # turn the input into ``source``, in file order, not overlapping
    targets: tuple[Target, ...] = ()  # one per diagnostic about a class or op call, in the same order
    #: False for ``diagnostics_only``: the diagnostics and targets are final, ``source`` is the input
    emitted: bool = True
    original: str | None = field(default=None, compare=False, repr=False)  # the input, when edited

    #: per flattened name, how torch.compile may treat it (inliner/engine/analysis/compile_kind.py)
    compile_kinds: tuple[tuple[str, CompileKind], ...] = ()

    @cached_property
    def line_map(self) -> LineMap:
        """For each line of ``source``, the input line it comes from (for tracebacks)."""
        if not self.edits or self.original is None:
            return LineMap.identity(self.source)
        return line_map(self.original, self.edits)
