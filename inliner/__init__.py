"""inliner: flatten torch.autograd.Function subclasses into explicit fwd/bwd functions.

The engine (``inliner.engine.flatten``) is a pure function from source text to new
text plus diagnostics; the command line, the import hook and the language server
only call it. Rewritten code imports nothing from here but ``inliner.runtime``.
"""

from __future__ import annotations

__version__ = "0.1.0"

from inliner.diagnostics import Diagnostic  # noqa: E402
from inliner.engine import FlattenResult, flatten  # noqa: E402

__all__ = ["Diagnostic", "FlattenResult", "flatten", "__version__"]
