"""One file through the engine: read, flatten, check the result is safe, write.

Every problem becomes a failed ``Outcome`` naming the reason (the engine never
raises: its internal errors come back in its result), and a failed file is never
written. It runs in worker processes, so its inputs and outputs are plain
picklable data.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

from inliner.cli import io as sio
from inliner.cli.report import unified_diff
from inliner.engine import FlattenResult, Selection, flatten
from inliner.engine.analysis.compile_overrides import CompileOverrides
from inliner.engine.diagnostics import Diagnostic
from inliner.project_sources import ProjectSources
from inliner.style import DEFAULT_LINE_LENGTH

Engine = Callable[..., FlattenResult]

CHANGED, UNCHANGED, FAILED = "changed", "unchanged", "failed"


@dataclass(frozen=True)
class Task:
    display: str  # shown in messages and passed to the engine as ``path``
    real: str | None  # the file read and written; None for stdin
    stdin: bytes | None = None
    write: bool = True  # False for --check / --diff / stdin
    diff: bool = False
    safe: bool = True
    select: Selection | None = None
    module: str | None = None  # the dotted module name of the file, for [tool.inliner] compile
    compile_overrides: CompileOverrides | None = None
    #: (class of this module, a subclass in another module of the tree), by qualified name
    subclassed: tuple[tuple[str, str], ...] = ()
    line_length: int = DEFAULT_LINE_LENGTH  # the project's black or ruff line-length (inliner/style.py)

    def engine_options(self) -> dict:
        return {
            "module": self.module,
            "compile_overrides": self.compile_overrides,
            "subclassed": dict(self.subclassed) or None,
            "line_length": self.line_length,
            "sources": ProjectSources.of_file(self.real, self.module) if self.real else None,
        }


@dataclass(frozen=True)
class Outcome:
    display: str
    status: str  # CHANGED / UNCHANGED / FAILED
    reason: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    flattened: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    diff: str | None = None
    #: for stdin: the bytes to echo (the new text, or the input when failed/unchanged)
    output: bytes | None = None
    encoding: str = "utf-8"


def run(task: Task, engine: Engine | None = None) -> Outcome:
    engine = engine if engine is not None else flatten
    snapshot: sio.Snapshot | None = None
    try:
        if task.stdin is None:
            assert task.real is not None, "a task reads either a file or stdin"
            snapshot = sio.read(task.real)
            decoded = snapshot.decoded
        else:
            decoded = sio.decode(task.stdin)
    except sio.SourceError as exc:
        return Outcome(task.display, FAILED, str(exc), output=task.stdin)
    old = decoded.text
    original = task.stdin if snapshot is None else snapshot.data

    def failed(reason: str, result: FlattenResult | None = None) -> Outcome:
        return Outcome(
            task.display,
            FAILED,
            reason,
            diagnostics=result.diagnostics if result is not None else (),
            output=original if task.stdin is not None else None,
            encoding=decoded.encoding,
        )

    result = engine(old, path=task.display, select=task.select, **task.engine_options())
    if result.error is not None:
        return failed(result.error, result)
    new = result.source
    if new == old:
        return Outcome(
            task.display,
            UNCHANGED,
            diagnostics=result.diagnostics,
            refused=result.refused,
            output=original if task.stdin is not None else None,
            encoding=decoded.encoding,
        )
    try:
        data = sio.encode(new, decoded.encoding)
    except sio.SourceError as exc:
        return failed(str(exc), result)
    if task.safe:
        problem = _verify(old, new, task, engine, result)
        if problem is not None:
            return failed(problem, result)
    if task.write and task.real is not None:
        try:
            sio.write_atomic(task.real, data, expect=snapshot)
        except sio.SourceError as exc:
            return failed(str(exc), result)
    return Outcome(
        task.display,
        CHANGED,
        diagnostics=result.diagnostics,
        flattened=result.flattened,
        refused=result.refused,
        diff=unified_diff(old, new, task.display) if task.diff else None,
        output=data if task.stdin is not None else None,
        encoding=decoded.encoding,
    )


def _compiles(text: str, path: str) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning etc. are the user's business
        try:
            compile(text, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            return f"{getattr(exc, 'msg', exc)}" + (f" (line {line})" if line else "")
    return None


def _verify(old: str, new: str, task: Task, engine: Engine, first: FlattenResult) -> str | None:
    """Why the new text must not be written, or None (black's --safe, for our engine)."""
    problem = _compiles(new, task.display)
    if problem is not None:
        if _compiles(old, task.display) is not None:
            return (
                "cannot check the result: the input does not compile on this Python either"
                " (use --fast to skip the check)"
            )
        return f"the rewritten code does not parse: {problem}; file left unchanged (this is a bug in inliner)"
    # Idempotence: a second pass over the output must find nothing more to do. A
    # line selection would point somewhere else in the new text, so re-check by the
    # names that were flattened instead.
    if task.select is not None and task.select.line is not None:
        selections: list[Selection | None] = [Selection(name=n) for n in first.flattened]
    else:
        selections = [task.select]
    for select in selections:
        again = engine(new, path=task.display, select=select, **task.engine_options())
        if again.error is not None:
            return f"the rewritten code cannot be processed again: {again.error}; file left unchanged"
        if again.changed or again.source != new:
            return (
                "the rewrite is not stable (a second pass changes the result); file left unchanged"
                " (this is a bug in inliner; --fast skips this check)"
            )
    return None
