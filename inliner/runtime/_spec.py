"""What ``custom_vjp`` knows of one original Function: the static facts its carriers,
dynamo's shim and thunder's lookaside are all built from.

A ``Spec`` is frozen: the carriers, ``_contract``, ``_dynamo`` and ``_thunder`` only read
it (``custom_vjp`` makes it, then a copy with ``decorated``, which needs the spec itself).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inliner.runtime._replay import Decorated


@dataclasses.dataclass(eq=False, frozen=True)  # identity, as a spec is one binding
class Spec:
    """The keywords ``custom_vjp`` was given, as its carriers use them (each field's
    comment starts with the keyword it comes from, where the name differs)."""

    fwd: Callable  # fwd(*inputs) -> (outputs, residuals)
    bwd: Callable  # bwd(residuals, *grads) -> one gradient per input
    name: str  # the original's name: the carriers', the flat callable's
    module: str  # fwd's module: the carriers', the flat callable's
    # saved_for_backward_idx: residuals (each a tensor or None) that the original sent
    # through ``ctx.save_for_backward``; the others are kept as plain references.
    saved_idx: tuple[int, ...]
    # a residual that is a whole ``saved_tensors`` tuple (used when the original saved
    # conditionally or a variable number of tensors)
    saved_tensors_idx: int | None
    # ctx_attrs: residual index -> the ctx attribute of the original it was. The eager
    # carrier sets it on the autograd node (in the original, ctx *is* ``out.grad_fn``) and
    # backward reads it back from there, so a write through ``grad_fn`` is what it sees.
    attrs: tuple[tuple[int, str], ...]
    nondiff: tuple[int, ...]  # non_differentiable_idx: outputs passed to mark_non_differentiable
    dirty: tuple[int, ...]  # dirty_idx: inputs passed to mark_dirty
    materialize_grads: bool  # False replays ``ctx.set_materialize_grads(False)``
    # True for originals in the setup_context style (torch fills forward's defaults
    # before apply); False for the combined style (it does not)
    fill_defaults: bool
    # forward_decorators / backward_decorators: the original's decorators, in source order
    # (``custom_fwd``, ``custom_bwd``, ``once_differentiable``, or any other), applied once,
    # as the original's class body applied them (``inliner.runtime._replay``); a
    # setup_context-style forward takes none. custom_vjp's ``backward_name`` is what the
    # decorated backward was called (``vjp``), for decorators that read it.
    forward_decorators: tuple[Callable, ...]
    backward_decorators: tuple[Callable, ...]
    bwd_needs_input_grad: bool  # pass ``needs_input_grad=ctx.needs_input_grad`` to bwd
    # False: the original backward never read ``ctx.saved_tensors``, so neither does the
    # carrier (reading runs the version check); those residual slots reach bwd as None.
    bwd_reads_saved: bool
    # the original backward read ``ctx.saved_tensors`` only on some paths, after a return,
    # or more than once; bwd reads the saved slots of its residuals where the original
    # read them, and the carriers pass a ``SavedOnDemand`` that reads
    # ``ctx.saved_tensors`` at each such access.
    saved_on_demand: bool
    generate_vmap_rule: bool  # the original's flag (torch also generates one when it has no vmap)
    vmap: Callable | None  # the original's ``vmap`` staticmethod
    jvp: Callable | None  # jvp(residuals, *tangents): the forward-mode rule, if the original had one
    # saved_for_forward_idx: residuals the original sent through ``ctx.save_for_forward``
    fsaved_idx: tuple[int, ...]
    # the original's ONNX ``symbolic(g, *inputs)``, put on every carrier, where the
    # TorchScript-based ``torch.onnx.export`` looks for it
    symbolic: Callable | None
    # ctx_record: fwd's one residual is a ``Record`` (its ctx, made explicit); what fwd
    # saved, marked and set on it is replayed on the real ctx (the autograd node), and bwd
    # gets that ctx in its place (jvp, and bwd under a torch.func wrapper, get the record
    # bound to it). The index and flag fields above are then unused.
    record: bool
    # fwd takes ``needs_input_grad`` (the apply slots' flags, as ``ctx.needs_input_grad``
    # gives them) as a keyword-only argument
    fwd_needs_input_grad: bool
    # how ``torch.compile`` may see the call (see inliner.runtime._dynamo).
    # ``"traceable"`` (pure torch bodies): one graph node, compiled through.
    # ``"opaque"`` (bodies fake tensors cannot run) and ``"side_effecting"`` (bodies
    # whose Python effects must happen on every call): an eager island, as dynamo makes
    # of the original (a graph break at the call).
    # This is the forward's kind where the backward's is given apart (``backward_kind``);
    # rewritten code from before that gave one kind for both.
    compile_kind: str
    compile_reason: str | None  # why, for the error ``fullgraph=True`` raises
    # backward_kind: the backward's own kind (``compile_kind`` where not given apart)
    backward_kind: str
    backward_reason: str | None
    # backward_nones: positions whose gradient every return of bwd gives as a literal
    # None (None: not known), which an opaque backward run by an op must give again
    backward_nones: frozenset[int] | None
    # split_decorators: the engine judged the replayed decorators fit for the split path
    # (dynamo traces them around fwd, as it traced them around the original's forward);
    # rewritten code from before that keeps a decorated Function an island
    split_decorators: bool = False
    # record_read_only: the engine proved that bwd sets and deletes no attribute of the
    # record (it may call into objects stored on it, which a record rebuilt for each
    # compiled backward holds as well); rewritten code from before that keeps an island
    record_read_only: bool = False
    # record_sets_only: the engine proved that bwd sets attributes of the record, deletes
    # none and does nothing else dynamo refuses: dynamo traces such sets on the original's
    # ctx, so each compiled backward of the original sees the ctx its forward left, as a
    # record rebuilt for each backward does (the eager call keeps one record throughout)
    record_sets_only: bool = False
    # forward_writes_arguments: a side-effecting forward whose effects are all writes into
    # the arguments at these positions (``seen.append(x)``): where each is a list at the
    # call, dynamo guards its length as it did for the original (which recompiles on every
    # call), so the split path does what the original did and an island would only add a
    # graph break; anything else there keeps the island (``_dynamo.compile_path``)
    forward_writes_arguments: tuple[int, ...] = ()
    decorated: Decorated | None = None  # the decorated trampolines, if there are decorators

    @property
    def traceable(self) -> bool:
        """Both bodies pure torch: the graph path under torch.compile (one node), where
        anything else is the split path or an eager island (``inliner.runtime._dynamo``)."""
        return self.compile_kind == "traceable" and self.backward_kind == "traceable"
