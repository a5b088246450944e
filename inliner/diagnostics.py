"""Diagnostics are data: a stable code, a message that says what to do, a position.

Only the surfaces (CLI, language server, import hook) turn them into text.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"  # the file could not be processed at all
    WARNING = "warning"  # a Function (or op call) was left untouched
    INFO = "info"  # a Function (or op call) can be / was flattened


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int  # 1-based
    column: int  # 1-based, like black/ruff/pyflakes output
    code: str
    message: str
    severity: Severity = Severity.WARNING
    #: the class (or op call) the diagnostic is about, when there is one
    name: str | None = None
    end_line: int | None = None
    end_column: int | None = None

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"


# Every code the engine emits, with a one-line summary; README documents each.
CODES: dict[str, str] = {
    "INL000": "the file could not be parsed",
    "INL001": "flattened (informational)",
    "INL002": "internal error in inliner, please report it (the class, call or file is left untouched)",
    "INL003": "internal error: the rewrite failed a safety invariant (please report it)",
    "INL100": "ctx is used in a way the engine cannot follow",
    "INL101": "a ctx attribute is set under a computed name or through setattr",
    "INL102": "ctx is passed to a helper or stored elsewhere",
    "INL103": "a ctx attribute is not set on every path that returns",
    "INL104": "backward writes to ctx",
    "INL105": "the class shape is not supported (legacy, extra members, inheritance)",
    "INL106": "a decorator on forward/backward is not understood",
    "INL107": "mark_dirty / mark_non_differentiable arguments cannot be matched to inputs/outputs",
    "INL108": "set_materialize_grads is called conditionally or with a non-constant",
    "INL109": "the forward signature is not supported",
    "INL110": "setup_context computes values (flattening could change torch.func higher-order grads)",
    "INL111": "save_for_backward is called in a shape the engine cannot follow",
    "INL112": "the class name is rebound or used in a way that keeps the class needed",
    "INL200": "autograd_function_apply call whose bodies cannot be found statically",
    "INL201": "autograd_function_apply call in a shape the engine cannot follow",
}

#: The code of an engine bug: what it was working on is left untouched, the rest still flattened.
INTERNAL_ERROR = "INL002"
#: A rewrite that failed a safety invariant (inliner/invariants.py): a lowering bug caught before writing.
INVARIANT_VIOLATION = "INL003"
#: Both mean "please report": a surface logs them, a test fails on them.
INTERNAL_CODES = frozenset({INTERNAL_ERROR, INVARIANT_VIOLATION})


def internal_error(exc: BaseException) -> str:
    """``KeyError: 'x' at scopes.py:120``: what failed and where in inliner, for a bug report."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
