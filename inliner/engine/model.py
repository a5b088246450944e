"""The one intermediate description of "a custom VJP" that both input forms lower into.

A ``Function`` subclass and an ``autograd_function_apply`` call both become a
``CustomVJP``: a ctx-free ``fwd(*inputs) -> (outputs, residuals)``, a ctx-free
``bwd(residuals, *grads) -> grads`` and the static flags the runtime needs to
replay what ``ctx`` did. ``inliner.engine.emit`` prints it; nothing else does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from inliner.engine.codes import Code


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
    #: the class was defined inside a function (a factory), whose call may run inside a
    #: compiled region: its decorators are emitted as a function returning them
    made_in_function: bool = False
    #: what each of those is (``inliner.engine.function_class.decorators.DecoratorUse``): not emitted, read by
    #: whoever decides how the flat callable may be compiled
    decorators: tuple[Any, ...] = ()
    backward_name: str = "backward"  # the original's name for it (``vjp``), which a decorator may read
    bwd_needs_input_grad: bool = False
    bwd_reads_saved: bool = True
    saved_on_demand: bool = False  # bwd reads the saved slots where the original read ctx.saved_tensors
    generate_vmap_rule: cst.BaseExpression | None = None
    vmap: str | None = None  # name of an emitted function
    jvp: str | None = None  # name of an emitted forward-mode rule
    saved_for_forward_idx: tuple[int, ...] = ()
    symbolic: cst.BaseExpression | None = None  # the ONNX symbolic the carriers carry
    #: the ctx-record strategy (``inliner.engine.function_class.ctx_record``): fwd's one residual is a ``Record``
    ctx_record: bool = False
    fwd_needs_input_grad: bool = False
    #: why ctx needed a record (the named lowering's reason), for the INL001 message
    record_reason: str = ""
    #: ``ctx.attr`` backward/jvp write (a side effect a compiled backward does not repeat)
    backward_writes_ctx: tuple[str, ...] = ()
    #: those of ``backward_writes_ctx`` that delete the attribute, which dynamo refuses to
    #: trace on the original's ctx (it runs that Function eagerly)
    backward_deletes_ctx: tuple[str, ...] = ()
    #: backward writes ctx by setting attributes only and has no other effect dynamo
    #: refuses: dynamo traces such sets on the original's ctx, so that each compiled backward
    #: sees the ctx forward left, as a record rebuilt for each backward does
    record_sets_only: bool = False
    #: (residual index, attribute name): residuals that were ``ctx.<name>`` in the original, which the
    #: eager carrier keeps on the autograd node under that name and backward reads back from it
    ctx_attrs: tuple[tuple[int, str], ...] = ()

    compile_kind: str = "traceable"  # how torch.compile may treat it (inliner/engine/analysis/compile_kind.py)
    compile_reason: str = ""  # why it is not traceable, or which override set it
    # the backward's own kind (``compile_kind`` is then the forward's, jvp's included)
    backward_kind: str = "traceable"
    backward_reason: str = ""
    #: positions every return of bwd gives as a literal None (None: not known)
    backward_nones: tuple[int, ...] | None = None
    #: a side-effecting forward whose effects are all writes into these arguments
    forward_argument_writes: tuple[int, ...] = ()


@dataclass
class KeptClass:
    """The plain class a Function its module uses as a class becomes (``runtime.FlatClass``).

    ``node`` is the original class without its autograd members; the emitter appends
    ``apply = staticmethod(custom_vjp(...))``. A root class derives from ``FlatClass``
    instead of ``torch.autograd.Function``; a subclass of a flattened class in the same
    module keeps its base.
    """

    node: cst.ClassDef
    replace_base: bool = True


@dataclass
class CustomVJP:
    name: str  # the name the flat callable is bound to (the original class name)
    fwd: cst.FunctionDef
    bwd: cst.FunctionDef
    spec: VJPSpec
    extra: list[cst.FunctionDef] = field(default_factory=list)  # e.g. a vmap rule
    leading_lines: tuple[cst.EmptyLine, ...] = ()
    kept: KeptClass | None = None  # the class stays, with the flat callable as its ``apply``
    #: the flattened class's docstring, which the emitter puts on fwd (the flat callable's ``__doc__``)
    class_docstring: cst.SimpleStatementLine | None = None


@dataclass(frozen=True)
class Refusal:
    """Why a candidate was left untouched; ``node`` locates the diagnostic."""

    code: Code
    reason: str
    node: cst.CSTNode | None  # None: the caller knows the position


class Refuse(Exception):
    """Raised inside a lowering to abandon the candidate with a diagnostic."""

    def __init__(self, code: Code, reason: str, node: cst.CSTNode | None) -> None:
        super().__init__(reason)
        self.refusal = Refusal(code, reason, node)
