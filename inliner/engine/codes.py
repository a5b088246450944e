"""Every diagnostic code the engine emits, with the one line that documents it.

A code is stable once published: tools filter on it (``--statistics``, SARIF rules, CI
gates), so a code the engine stopped reporting keeps its member and says so. docs/diagnostics.md's
table gives each code an example; ``tests/engine/test_codes.py`` runs an example of every code
through the engine, before and after.
"""

from __future__ import annotations

from enum import Enum
from typing import cast


class Code(str, Enum):
    """A diagnostic code: compares and formats as its ``INLxxx`` string."""

    summary: str

    def __new__(cls, value: str, summary: str) -> Code:
        member = str.__new__(cls, value)
        member._value_ = value
        member.summary = summary
        return member

    @classmethod
    def of(cls, value: str) -> Code:
        """The member whose code is ``value`` (what ``Code(value)`` does, spelled so mypy follows)."""
        return cast(Code, cls._value2member_map_[value])

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    # -- the file, the engine itself ------------------------------------------------
    PARSE_ERROR = "INL000", "the file could not be parsed"
    FLATTENED = "INL001", "flattened (informational)"
    INTERNAL_ERROR = (
        "INL002",
        "internal error in inliner, please report it (the class, call or file is left untouched)",
    )
    INVARIANT_VIOLATION = "INL003", "internal error: the rewrite failed a safety invariant (please report it)"

    # -- Function classes ---------------------------------------------------------------
    CTX_UNSUPPORTED = "INL100", "ctx is used in a way no rewrite can stand in for"
    CTX_TORCH_ATTRIBUTE = "INL101", "an attribute torch itself uses is assigned on ctx"
    CTX_ESCAPES = "INL102", "ctx is stored elsewhere, or handed to code the engine cannot read"
    # INL103, INL104, INL107, INL108, INL111: the named lowering's reasons for falling back to
    # a ctx record; no longer reported (the INL001 message names them)
    CTX_ATTRIBUTE_ON_SOME_PATHS = (
        "INL103",
        "a ctx attribute is not set on every path that returns (no longer reported: ctx record)",
    )
    BACKWARD_WRITES_CTX = "INL104", "backward writes to ctx (no longer reported: ctx record)"
    CLASS_SHAPE = (
        "INL105",
        "the class shape is not supported (legacy, a member torch reads, super() in a body)",
    )
    DECORATOR = "INL106", "a decorator that cannot be replayed exactly"
    MARKS_UNMATCHED = (
        "INL107",
        "mark_dirty / mark_non_differentiable arguments cannot be matched (no longer reported: ctx record)",
    )
    CONDITIONAL_MATERIALIZE_GRADS = (
        "INL108",
        "set_materialize_grads is called conditionally (no longer reported: ctx record)",
    )
    SIGNATURE = "INL109", "the forward signature is not supported"
    SETUP_CONTEXT_COMPUTES = (
        "INL110",
        "setup_context computes values (flattening could change torch.func higher-order grads)",
    )
    CONDITIONAL_SAVE_FOR_FORWARD = (
        "INL111",
        "save_for_forward is called conditionally or twice (no longer reported: ctx record)",
    )
    USED_AS_FUNCTION = "INL112", "the class is used in a way only a torch.autograd.Function answers"
    MEANT_AS_BASE = (
        "INL113",
        "the class is meant as a base for other Functions (abstract hooks, a forward taking cls, subclassed elsewhere)",
    )

    # -- autograd_function_apply calls ----------------------------------------------------
    OP_BODIES_NOT_FOUND = "INL200", "autograd_function_apply call whose bodies cannot be found statically"
    OP_CALL_SHAPE = "INL201", "autograd_function_apply call in a shape the engine cannot follow"
    OP_BODY_NOT_STRAIGHT_LINE = "INL202", "an autograd_function_apply body that is not straight-line torch code"
    OP_BODY_GRAD_MODE = (
        "INL203",
        "an autograd_function_apply body switches grad mode other than by dynamo's bracket",
    )

    # -- configuration --------------------------------------------------------------------
    PRAGMA_NOT_UNDERSTOOD = "INL300", "a `# inliner:` pragma is not understood (it is ignored)"


#: Both mean "please report": a surface logs them, a test fails on them.
INTERNAL_CODES = frozenset({Code.INTERNAL_ERROR, Code.INVARIANT_VIOLATION})
