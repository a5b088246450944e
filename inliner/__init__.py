"""inliner: flatten torch.autograd.Function subclasses into explicit fwd/bwd functions.

The engine (``inliner.engine.flatten``) is a pure function from source text to new
text plus diagnostics; the command line, the import hook and the language server
only call it. Rewritten code imports nothing from here but ``inliner.runtime``, so
this package ``__init__`` loads the engine lazily: importing the runtime stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Diagnostic", "FlattenResult", "__version__", "flatten"]

if TYPE_CHECKING:
    from inliner.engine import FlattenResult, flatten
    from inliner.engine.diagnostics import Diagnostic


def __getattr__(name: str) -> Any:
    if name == "Diagnostic":
        from inliner.engine.diagnostics import Diagnostic

        return Diagnostic
    if name in ("FlattenResult", "flatten"):
        from inliner import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'inliner' has no attribute {name!r}")
