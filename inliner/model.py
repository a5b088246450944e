"""The one intermediate description of "a custom VJP" that both input forms lower into.

A ``Function`` subclass and an ``autograd_function_apply`` call both become a
``CustomVJP``: a ctx-free ``fwd(*inputs) -> (outputs, residuals)``, a ctx-free
``bwd(residuals, *grads) -> grads`` and the static flags the runtime needs to
replay what ``ctx`` did. ``inliner.emit`` prints it; nothing else does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst


@dataclass
class VJPSpec:
    """Static facts about the original, passed to ``inliner.runtime.custom_vjp``."""

    saved_for_backward_idx: tuple[int, ...] = ()
    saved_tensors_idx: int | None = None
    non_differentiable_idx: tuple[int, ...] = ()
    dirty_idx: tuple[int, ...] = ()
    materialize_grads: bool = True
    fill_defaults: bool = False
    forward_decorators: tuple[cst.BaseExpression, ...] = ()
    backward_decorators: tuple[cst.BaseExpression, ...] = ()
    bwd_needs_input_grad: bool = False
    bwd_reads_saved: bool = True
    generate_vmap_rule: cst.BaseExpression | None = None
    vmap: str | None = None  # name of an emitted function
    jvp: str | None = None  # name of an emitted forward-mode rule
    saved_for_forward_idx: tuple[int, ...] = ()
    compile_kind: str = "traceable"  # how torch.compile may treat it (inliner/compile_kind.py)
    compile_reason: str = ""  # why it is not traceable, or which override set it


@dataclass
class CustomVJP:
    name: str  # the name the flat callable is bound to (the original class name)
    fwd: cst.FunctionDef
    bwd: cst.FunctionDef
    spec: VJPSpec
    extra: list[cst.FunctionDef] = field(default_factory=list)  # e.g. a vmap rule
    leading_lines: tuple[cst.EmptyLine, ...] = ()


@dataclass(frozen=True)
class Refusal:
    """Why a candidate was left untouched; ``node`` locates the diagnostic."""

    code: str
    reason: str
    node: cst.CSTNode | None  # None: the caller knows the position


class Refuse(Exception):
    """Raised inside a lowering to abandon the candidate with a diagnostic."""

    def __init__(self, code: str, reason: str, node: cst.CSTNode | None) -> None:
        super().__init__(reason)
        self.refusal = Refusal(code, reason, node)
