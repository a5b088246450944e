"""The engine: one pure function from source text to new text and diagnostics.

Every surface (command line, import hook, language server) calls ``flatten`` and
nothing else, so they always agree. ``flatten`` never raises: an internal error is
part of the result (code ``INL002``), so no surface needs a guard of its own.

The result says what the engine did, so no surface has to work it out again: the
edits that turn the input into the new text, the classes and op calls it looked at
(``targets``) and where each new line comes from (``line_map``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from inliner.engine.analysis.compile_overrides import CompileOverrides
from inliner.engine.codes import Code
from inliner.engine.diagnostics import Diagnostic, Severity, internal_error
from inliner.engine.incremental import Cancelled, FlattenCache
from inliner.engine.result import FlattenResult, Selection, Target, TextEdit

__all__ = ["Cancelled", "FlattenCache", "FlattenResult", "Selection", "Target", "TextEdit", "flatten"]


def flatten(
    source: str,
    *,
    path: str = "<string>",
    select: Selection | None = None,
    cache: FlattenCache | None = None,
    diagnostics_only: bool = False,
    stop: Callable[[], bool] | None = None,
    module: str | None = None,
    compile_overrides: CompileOverrides | None = None,
    subclassed: Mapping[str, str] | None = None,
    line_length: int = 88,
    sources: Callable[[str], str | None] | None = None,
) -> FlattenResult:
    """Flatten every autograd.Function subclass (and autograd_function_apply call) in ``source``.

    ``module`` (``pkg.mod``) and ``compile_overrides`` (``[tool.inliner] compile``) decide
    the compile kind of a class the project names there; see inliner/engine/analysis/compile_overrides.py.
    ``subclassed`` (with ``module``): the classes other modules of the tree derive from,
    qualified name -> one such subclass (``inliner.subclassed``); they stay Functions (INL113).
    ``line_length`` is the width black formats the lines the engine writes to (the
    project's black or ruff ``line-length``); the lines the user wrote keep their text.
    ``sources`` (with ``module``): another module's source by its dotted name (None where
    it cannot be read), so that a decorator imported from it is seen into for the compile
    kind (inliner/engine/analysis/foreign.py); without it such a decorator keeps the call
    an eager island under torch.compile.

    Never raises. An internal error while lowering one class (or op call) leaves that
    one untouched with an ``INL002`` diagnostic and still flattens the others; one
    that stops the whole file returns the text unchanged with ``error`` set and an
    ``INL002`` diagnostic at 1:1.

    For an editor, which asks again on every keystroke:

    - ``cache``: a ``FlattenCache`` kept for this document; the next call lowers again
      only what changed (the result is the same as without it);
    - ``diagnostics_only``: decide every class and op call but emit no code
      (``emitted`` is False, ``source`` is the input). Only an engine bug in printing
      the code (an ``INL002`` that printing alone would hit) is not seen this way;
    - ``stop``: asked between classes; when it returns True, ``flatten`` raises
      ``Cancelled`` (the one exception it raises), keeping in ``cache`` what it did.
    """
    try:
        from inliner.engine.rewrite import rewrite_module

        return rewrite_module(
            source,
            path=path,
            select=select,
            module=module,
            compile_overrides=compile_overrides,
            subclassed=subclassed,
            cache=cache,
            diagnostics_only=diagnostics_only,
            stop=stop,
            line_length=line_length,
            sources=sources,
        )
    except Cancelled:
        raise
    except Exception as exc:  # an engine bug: the file is left as it is, and says why
        what = internal_error(exc)
        message = f"internal error ({what}); please report this as an inliner bug; the file is left untouched"
        diagnostic = Diagnostic(path, 1, 1, Code.INTERNAL_ERROR, message, Severity.ERROR)
        return FlattenResult(
            source, (diagnostic,), error=f"internal error: {what}; please report this as an inliner bug"
        )
