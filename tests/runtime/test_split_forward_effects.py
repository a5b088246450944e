"""Forward side effects that take the split path (docs/compile.md, "The paths"): dynamo
treats the rewrite's call as it treats the original's, so the rewrite compiles at least as
well as the original and its effects happen on every call.

Each case is an original autograd.Function (its backward deliberately not the true
derivative) and the engine's rewrite of it, both compiled (aot_eager, three calls) beside
the eager original: outputs, custom gradients, the effect after every call, and dynamo's
graph breaks, never more for the rewrite than for the original. A collective runs in a
single-process gloo group; the group is an argument of the Function.
"""

from __future__ import annotations

import contextlib
import io
import logging
import types
import warnings

import pytest
import torch
import torch._dynamo
import torch.distributed as dist
from torch._dynamo.utils import counters

from inliner import flatten
from tests.support import compile_checks as cc
from tests.support.harness import TORCH_2_13, load_module

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


HEAD = """\
import logging
import warnings

import torch
import torch.distributed as dist

logger = logging.getLogger("inliner.tests.split_effects")


def reduced(t, group):
    dist.all_reduce(t, group=group)
    return t


class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, arg):
"""
TAIL = """\
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 + x, None
"""

#: the forward's body (before ``ctx.save_for_backward``), the argument it takes
FORWARDS = {
    "print": ("print('forward', x.shape[0])\ny = x * 2", None),
    "logging": ("logger.warning('forward %d', x.shape[0])\ny = x * 2", None),
    "warnings": ("warnings.warn('forward')\ny = x * 2", None),
    "all_reduce on a group argument": ("y = x * 2\ndist.all_reduce(y, group=arg)", "group"),
    "a helper's all_reduce on a group argument": ("y = reduced(x * 2, arg)", "group"),
    "barrier on a group argument": ("dist.barrier(group=arg)\ny = x * 2", "group"),
    "a method of an argument": ("arg.bump()\ny = arg.scale(x)", "layer"),
    "RNG seeding": ("torch.manual_seed(0)\ny = x * 2 + torch.rand_like(x)", None),
}


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.alpha = 1.5
        self.calls = 0

    def scale(self, t: torch.Tensor) -> torch.Tensor:
        return t * self.alpha

    def bump(self) -> None:
        self.calls += 1


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    if not (dist.is_available() and dist.is_gloo_available()):
        pytest.skip("torch.distributed with gloo is not built in")
    store = tmp_path_factory.mktemp("gloo") / "store"
    dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"file://{store}")
    yield dist.new_group([0])
    dist.destroy_process_group()


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _pair(case: str) -> tuple[types.ModuleType, types.ModuleType, str]:
    forward, _ = FORWARDS[case]
    source = HEAD + "\n".join(" " * 8 + line for line in forward.splitlines()) + "\n" + TAIL
    result = flatten(source, path="split_effects.py")
    assert "Fn" in result.flattened, [d.format() for d in result.diagnostics]
    slug = "".join(c if c.isalnum() else "_" for c in case)
    return (
        load_module(source, f"split_effects_original_{slug}"),
        load_module(result.source, f"split_effects_flat_{slug}"),
        slug,
    )


def _argument(case: str, request: pytest.FixtureRequest) -> object:
    """The Function's second argument: a gloo group (the fixture), a module, or None."""
    kind = FORWARDS[case][1]
    if kind == "group":
        return request.getfixturevalue("group")
    return Layer() if kind == "layer" else None


def _run(module: types.ModuleType, arg: object, compiled: bool, fullgraph: bool = False) -> dict:
    """Three calls, each differentiated: outputs, gradients, the effects seen after each
    call, the RNG state after the last, and dynamo's graph breaks."""
    fn = module.Fn
    apply = fn.apply if isinstance(fn, type) else fn

    def body(x):
        return apply(x * 1, arg) + 1

    records = _Records()
    module.logger.addHandler(records)
    module.logger.propagate = False
    torch._dynamo.reset()
    counters.clear()
    call = torch.compile(body, backend="aot_eager", fullgraph=fullgraph) if compiled else body
    out = io.StringIO()
    results, effects = [], []
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            for k in range(cc.CALLS):
                torch.manual_seed(k)
                x = torch.randn(4, requires_grad=True)
                results.append(cc.call_and_differentiate(call, (x,)))
                effects.append(
                    (
                        out.getvalue().count("forward"),
                        len(records.messages),
                        sum("forward" in str(w.message) for w in caught),
                        getattr(arg, "calls", 0),
                    )
                )
            rng = torch.rand(1)
    finally:
        module.logger.removeHandler(records)
    return {"results": results, "effects": effects, "rng": rng, "breaks": sum(counters["graph_break"].values())}


def _same(a: dict, b: dict) -> bool:
    return all(
        cc.same(x[0], y[0]) and cc.same(x[1], y[1]) for x, y in zip(a["results"], b["results"], strict=True)
    ) and torch.equal(a["rng"], b["rng"])


@pytest.mark.parametrize("case", FORWARDS)
def test_a_forward_effect_dynamo_treats_as_the_original_s_takes_the_split_path(case, request):
    original, flat, _ = _pair(case)
    torch._dynamo.reset()
    assert flat.Fn.compile_path == "split", (flat.Fn.compile_kind, flat.Fn.compile_reason)
    eager = _run(original, _argument(case, request), compiled=False)
    compiled_original = _run(original, _argument(case, request), compiled=True)
    compiled_flat = _run(flat, _argument(case, request), compiled=True)
    assert _same(compiled_flat, eager), "outputs, custom gradients or the RNG state differ from eager"
    assert compiled_flat["effects"] == eager["effects"], "an effect missed or repeated on some call"
    assert compiled_original["effects"] == eager["effects"]
    assert compiled_flat["breaks"] <= compiled_original["breaks"]


@pytest.mark.parametrize("case", ["all_reduce on a group argument", "a method of an argument"])
def test_fullgraph_compiles_the_rewrite_where_it_compiles_the_original(case, request):
    """(torch 2.9's dynamo refuses the original's method call that sets an attribute inside
    the autograd.Function HOP, "Mutating a variable not in the current scope"; the rewrite
    compiles there too.)"""
    original, flat, _ = _pair(case)
    eager = _run(original, _argument(case, request), compiled=False)
    for module in (original, flat):
        if module is original and case == "a method of an argument" and not TORCH_2_13:
            continue
        result = _run(module, _argument(case, request), compiled=True, fullgraph=True)
        assert _same(result, eager) and result["effects"] == eager["effects"]


def test_the_collective_is_in_the_graph_every_call_runs(group):
    """At world size 1 an all_reduce leaves the values as they were: that it runs on every
    call shows in the graph AOTAutograd compiled, which holds it."""
    _, flat, _ = _pair("all_reduce on a group argument")
    found = cc.graphs_and_breaks(lambda x: flat.Fn(x * 1, group) + 1, lambda: (torch.randn(4, requires_grad=True),))
    assert found.ok, found.reason
    forward_graph = found.details["graphs"][1]
    assert "all_reduce" in forward_graph.code and "inliner.attach" in forward_graph.code
    assert cc.higher_order_ops(found.details["graphs"]) == []
