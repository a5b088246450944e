"""Facts about a forward's outputs that the carriers and thunder's lookaside share.

A leaf (it imports torch only) so ``inliner.runtime._thunder`` can use it without
importing the runtime that loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch


class _CtxStandIn:
    """What decorators see as ``ctx`` where no carrier gives one (torch.func's forward, thunder);
    its attributes move to the real ctx."""

    # What thunder's lookaside sets on its stand-ins; declared without defaults, so an
    # attribute nobody set is still missing (``hasattr`` is False), as on a fresh ctx
    saved_tensors: tuple[Any, ...]
    needs_input_grad: tuple[bool, ...]
    _inliner_residuals: Any
    _inliner_needs_input_grad: tuple[bool, ...]


def _flat_outputs(output: Any) -> tuple:
    return output if isinstance(output, tuple) else (output,)


def _repeats(
    flat_out: Sequence, args: Sequence, dirty: Sequence[int], tensor_type: type = torch.Tensor
) -> tuple[tuple[int, int], ...]:
    """``(i, j)`` for every output position ``i`` whose tensor eager autograd hands out
    again at ``j``, the last such position: a tensor made in forward (or a dirty input)
    returned twice. An input returned as-is is not one: each position gets its own view.
    ``tensor_type`` lets thunder's lookaside ask the same of its proxies."""
    own_views = [a for i, a in enumerate(args) if isinstance(a, tensor_type) and i not in dirty]
    last = {
        id(o): j for j, o in enumerate(flat_out) if isinstance(o, tensor_type) and not any(o is a for a in own_views)
    }
    return tuple((i, last[id(o)]) for i, o in enumerate(flat_out) if last.get(id(o), i) != i)
