"""Dumped dynamo graphs, end to end: compile real Functions, print the captured graph,
flatten the printed source, and check the flattened file computes what the original
Function computes (custom backward included) without the higher-order op.
"""

from __future__ import annotations

import pytest
import torch

from inliner import flatten
from tests.support import dump_originals as originals
from tests.support.harness import load_module

CASES = {
    "saved inputs": ("f_save_inputs", 2),
    "saved intermediate": ("f_intermediate", 1),
    "non-tensor ctx attribute": ("f_attr", 1),
    "two outputs, one non-differentiable": ("f_two_outputs", 1),
    "two Functions in one graph": ("f_two_functions", 2),
    "Function in a Module with a Parameter": ("Scaled", 1),
    "three nested calls": ("f_nested", 2),
}


def _capture(fn, inputs):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append((gm, list(example_inputs)))
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, fullgraph=True)(*inputs)
    ((gm, example_inputs),) = graphs
    return gm, example_inputs


def _grads(outputs, leaves):
    total = sum(o.sum() for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad)
    return torch.autograd.grad(total, leaves, allow_unused=True)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_flattened_dump_matches_original(case):
    name, n_inputs = CASES[case]
    torch.manual_seed(0)
    inputs = [torch.randn(4, requires_grad=True) for _ in range(n_inputs)]
    target = getattr(originals, name)
    fn = target() if isinstance(target, type) else target

    gm, example_inputs = _capture(fn, inputs)
    dump = "import torch\n\n" + gm.print_readable(print_output=False)
    assert "torch.ops.higher_order.autograd_function_apply" in dump  # what dynamo made of it

    result = flatten(dump, path="dump.py")
    assert not result.refused, [d.format() for d in result.diagnostics]
    assert "autograd_function_apply(" not in result.source
    assert "fwd_body_0" not in result.source, "the nested body classes are removed once unused"
    assert flatten(result.source).source == result.source

    flattened = load_module(result.source, "hop_flattened")
    leaves = [t for t in example_inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    got = flattened.GraphModule()(*example_inputs)
    expected = fn(*inputs)
    torch.testing.assert_close(got[0], expected, rtol=0, atol=0)
    expected_grads = _grads([fn(*inputs)], leaves)
    got_grads = _grads(list(flattened.GraphModule()(*example_inputs)), leaves)
    for e, g in zip(expected_grads, got_grads):
        torch.testing.assert_close(g, e, rtol=0, atol=0)

    # The backward really is the custom one: the true derivative differs.
    with torch.enable_grad():
        true_grads = _grads([originals.through_forward(fn, inputs)], leaves)
    assert any(not torch.equal(t, g) for t, g in zip(true_grads, got_grads) if t is not None)
