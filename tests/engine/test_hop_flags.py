"""The op's flags as each generation of torch reads them (``hop_calls.read_flags``).

torch <= 2.9 reads ``args_tensor_mask`` and ``non_differentiable_idx`` and nothing
else; torch 2.10+ reads ``non_differentiable_idx``, ``saved_for_backward_idx`` and
``dirty_idx`` (default empty) and ignores the mask. A flag that is read must be a list
the engine can compute; a flag that is ignored may be anything; a read flag that is
missing or None makes torch raise, so the call is left as it is.
"""

from __future__ import annotations

import ast

import pytest

from inliner.engine import flatten
from inliner.engine.model import Refuse
from inliner.engine.op_call.hop_calls import read_flags


def _flags(keywords: str):
    call = ast.parse(f"f(fwd, bwd, x, {keywords})", mode="eval").body
    assert isinstance(call, ast.Call)
    return read_flags(call.keywords)


def test_old_generation_ignores_what_it_does_not_read():
    flags = _flags("args_tensor_mask=[True] * 2, non_differentiable_idx=[], saved_for_backward_idx=None, dirty_idx=f()")
    assert flags.old_abi
    assert flags.args_tensor_mask == (True, True)
    assert flags.dirty_idx == () and flags.saved_for_backward_idx is None


def test_new_generation_ignores_the_mask():
    flags = _flags("args_tensor_mask=None, non_differentiable_idx=[1], saved_for_backward_idx=[0] + [1]")
    assert not flags.old_abi
    assert flags.non_differentiable_idx == (1,)
    assert flags.saved_for_backward_idx == (0, 1)
    assert flags.dirty_idx == ()


@pytest.mark.parametrize(
    ("keywords", "reason"),
    [
        ("args_tensor_mask=[True]", "`non_differentiable_idx` is not passed, so torch raises KeyError"),
        ("non_differentiable_idx=[]", "`saved_for_backward_idx` is not passed, so torch raises KeyError"),
        ("args_tensor_mask=[True], non_differentiable_idx=None", "`non_differentiable_idx` is None"),
        ("non_differentiable_idx=[], saved_for_backward_idx=[], dirty_idx=None", "`dirty_idx` is None"),
        ("non_differentiable_idx=[], saved_for_backward_idx=idx", "`saved_for_backward_idx` is not a list"),
        # a computed mask may be None at run time: the generation is not known
        ("args_tensor_mask=mask, non_differentiable_idx=[]", "`args_tensor_mask` is not a list"),
        ("non_differentiable_idx=[], saved_for_backward_idx=[0] * n", "`saved_for_backward_idx` is not a list"),
        ("non_differentiable_idx=[], **flags", "`**` keywords are passed"),
        ("non_differentiable_idx=[], saved_for_backward_idx=[], extra=1", "an unknown keyword `extra`"),
    ],
)
def test_what_torch_would_reject_or_the_engine_cannot_compute_is_refused(keywords: str, reason: str):
    with pytest.raises(Refuse) as caught:
        _flags(keywords)
    assert reason in caught.value.refusal.reason


def test_a_refused_call_is_left_as_it_is():
    source = (
        "import torch\n\n\ndef fwd(x):\n    return x * 2, [x]\n\n\ndef bwd(g, x):\n    return g * x\n\n\n"
        "def f(x):\n    return torch.ops.higher_order.autograd_function_apply(fwd, bwd, x, non_differentiable_idx=[])\n"
    )
    result = flatten(source, path="m.py")
    assert result.source == source
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "INL201" and "KeyError" in diagnostic.message
