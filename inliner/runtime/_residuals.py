"""How bwd and jvp get their residuals back from a real ctx, where the carriers left them.

A carrier's forward sends the saved residuals through ``ctx.save_for_backward`` (and
``save_for_forward``) and keeps the others on ctx as ``_inliner_plain``; these rebuild the
tuple ``fwd`` returned, for a backward that reads ``ctx.saved_tensors`` only on some paths
(``SavedOnDemand``) and for the jvp method both carriers share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from inliner.runtime._record import bind


def _jvp_method(jvp: Callable, fsaved_idx: tuple[int, ...], record: bool = False) -> Callable:
    """``jvp(ctx, *tangents)``: in a jvp, ``ctx.saved_tensors`` are what forward saved for forward."""

    def method(ctx: Any, *tangents: Any) -> Any:
        residuals = list(ctx._inliner_plain)
        if fsaved_idx:
            saved = ctx.saved_tensors
            for k, i in enumerate(fsaved_idx):
                residuals[i] = saved[k]
        if record:
            bind(residuals[0], ctx)
        return jvp(tuple(residuals), *tangents)

    return method


class SavedOnDemand:
    """The residuals bwd gets when the original backward read ``ctx.saved_tensors`` only on
    some paths (after an early return, inside a branch) or more than once.

    Reading saved tensors is observable: it runs the version check, the saved-tensor unpack
    hooks and the "backward through the graph a second time" check. So the saved slots are
    read from ``ctx.saved_tensors`` at each access, which the flat bwd makes exactly where
    (and as often as) the original read them (``residuals[:k]``); the other slots are plain
    values. Indexing and slicing answer as the tuple ``fwd`` returned would.
    """

    __slots__ = ("_ctx", "_group_idx", "_plain", "_saved_idx")

    def __init__(self, ctx: Any, plain: Sequence[Any], saved_idx: tuple[int, ...], group_idx: int | None) -> None:
        self._ctx = ctx
        self._plain = tuple(plain)
        self._saved_idx = saved_idx
        self._group_idx = group_idx

    def __len__(self) -> int:
        return len(self._plain)

    def __iter__(self):
        return iter(self[:])

    def __getitem__(self, index: Any) -> Any:
        wanted = range(len(self._plain))[index]
        if isinstance(wanted, int):
            return self._values((wanted,))[0]
        return self._values(wanted)

    def _values(self, wanted: Sequence[int]) -> tuple:
        if not any(i in self._saved_idx or i == self._group_idx for i in wanted):
            return tuple(self._plain[i] for i in wanted)
        saved = self._ctx.saved_tensors  # one read, as one `ctx.saved_tensors` of the original
        out = []
        for i in wanted:
            if i in self._saved_idx:
                out.append(saved[self._saved_idx.index(i)])
            elif i == self._group_idx:
                out.append(tuple(saved[len(self._saved_idx) :]))
            else:
                out.append(self._plain[i])
        return tuple(out)
