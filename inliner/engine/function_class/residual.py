"""What fwd hands bwd in the named lowering: the residuals, and the names each side knows them by."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

#: ctx attributes torch itself uses: a class that sets or reads them through getattr is refused
RESERVED_ATTRS = {
    "saved_tensors",
    "saved_variables",
    "needs_input_grad",
    "materialize_grads",
    "to_save",
    "dirty_tensors",
    "non_differentiable",
    "saved_for_forward",
    "_dtype",
    "_fwd_used_autocast",
}


@dataclass
class Residual:
    """One value fwd returns for bwd (or jvp): a saved tensor, a ``ctx.attr``, or the whole save group."""

    kind: str  # "saved" | "fsaved" (save_for_forward) | "attr" | "group"
    attr: str | None
    fwd_name: str
    bwd_name: str = ""
    defined_by: list[cst.CSTNode] = field(default_factory=list)  # the small statements that assign it


def name_tuple(names: list[str]) -> cst.Tuple:
    """``(a, b)``: the residuals as fwd returns them, or ctx.saved_tensors as bwd reads it."""
    return cst.Tuple([cst.Element(cst.Name(n)) for n in names])
