"""A forward whose effects are plain sets of outside state, or counters on what its caller
passed, takes the split path; a counter on other state or an append keeps the island
(docs/compile.md, "The paths").

Dynamo traces a plain set (``state.last = v``, ``CACHE[key] = v``, ``global X; X = v``,
``nonlocal``, an attribute of a tensor argument) and replays it after the graph, as it
did in the original's forward, and nothing it guards changes on every call: the split
path gives the original's graphs, breaks and recompiles exactly, where an island would
add a graph break. So it does for a counter on an argument's attribute, which dynamo
makes dynamic after one recompile. A counter on module-level state or an append changes
what dynamo guards on every call: the original recompiled on every call until dynamo
gave the frame up, the island compiles once and breaks the graph at the call.

Each Function is written here, rewritten by the engine, and compiled (aot_eager) beside
its original over more calls than dynamo's recompile limit.
"""

from __future__ import annotations

import types

import pytest
import torch
import torch._dynamo  # loaded before the rewrite is, so its calls register with dynamo at once

from inliner import flatten
from tests.support import compile_checks as cc
from tests.support.harness import TORCH_2_13, load_module

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SOURCE = """
import torch

CACHE = {}
LAST = None
LOG = []


class Holder:
    def __init__(self):
        self.calls = 0
        self.last = None


HOLDER = Holder()


def _cached(t):
    key = (t.dtype, t.shape[-1])
    if key not in CACHE:
        CACHE[key] = 2.0
    return CACHE[key]


class SetsArgumentAttribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        state.last = x.detach() * 2
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class SetsArgumentItem(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        state["last"] = x.sum()
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class SetsTensorAttribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        x.offloaded = True
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class AssignsGlobal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        global LAST
        LAST = x.sum()
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class FillsModuleCache(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        return x * _cached(x)

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


def make_closure_set():
    last = None

    class AssignsNonlocal(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, state):
            nonlocal last
            last = x.sum()
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3, None

    return AssignsNonlocal, lambda: last


class CountsOnArgument(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        state.calls += 1
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class CountsInArgumentItem(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        state["calls"] += 1
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class WritesTensorArgument(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        state[0] = 5.0
        state[1] += 1.0
        return x * 2 + state

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class Buffers:
    buf = None
    rows = 3


class AllocatesOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        if Buffers.buf is None:
            Buffers.buf = torch.zeros(Buffers.rows)
        return x * 2 + Buffers.buf

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class CountsOnModuleObject(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        HOLDER.calls += 1
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class AppendsToModuleList(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, state):
        LOG.append(x.sum())
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None
"""

#: Function -> what its effect leaves, read after the calls
SPLIT = {
    "SetsArgumentAttribute": lambda module, state: state.last,
    "SetsArgumentItem": lambda module, state: state["last"],
    "SetsTensorAttribute": lambda module, state: None,
    "AssignsGlobal": lambda module, state: module.LAST,
    "FillsModuleCache": lambda module, state: dict(module.CACHE),
    "AssignsNonlocal": lambda module, state: module.read_last(),
    # a counter on what the caller passed: dynamo makes it dynamic after one recompile
    "CountsOnArgument": lambda module, state: state.calls,
    "CountsInArgumentItem": lambda module, state: state["calls"],
    # torchao's MXFP8OnDeviceAllToAllV: a class attribute allocated once from another one
    "AllocatesOnce": lambda module, state: module.Buffers.buf,
    # an in-place write into a tensor the caller passed: torch semantics, an input mutation
    "WritesTensorArgument": lambda module, state: state.clone(),
}
ISLAND = {
    "CountsOnModuleObject": lambda module, state: module.HOLDER.calls,
    "AppendsToModuleList": lambda module, state: [float(t) for t in module.LOG],
}


@pytest.fixture(scope="module")
def modules() -> tuple[types.ModuleType, types.ModuleType]:
    result = flatten(SOURCE, path="forward_sets.py")
    assert set(SPLIT) - {"AssignsNonlocal"} <= set(result.flattened), [d.format() for d in result.diagnostics]
    return _loaded(SOURCE, "forward_sets_original"), _loaded(result.source, "forward_sets_flat")


def _loaded(source: str, label: str) -> types.ModuleType:
    module = load_module(source, label)
    module.AssignsNonlocal, module.read_last = module.make_closure_set()
    return module


class _State:
    last = None
    calls = 0
    total = 0.0


def _state(name: str):
    if name == "CountsInArgumentItem":
        return {"calls": 0}
    if name == "WritesTensorArgument":
        return torch.zeros(3)
    return {} if name == "SetsArgumentItem" else _State()


def _compiled(module: types.ModuleType, name: str, effect) -> dict:
    """More compiled calls than the recompile limit: dynamo's counts, the gradients, the
    effect's state after the calls (and, for a tensor attribute, on every input)."""
    fn = getattr(module, name)
    apply = fn.apply if isinstance(fn, type) else fn
    state, inputs = _state(name), []

    def make_inputs():
        inputs.append(torch.randn(3, requires_grad=True))
        return (inputs[-1],)

    counts = cc.past_the_recompile_limit(lambda x: apply(x * 1, state) * 2, make_inputs)
    return {
        "counts": (counts["breaks"], counts["graphs"], counts["given_up"]),
        "grads": [grads[0] for _, grads in counts["calls"]],
        "effect": effect(module, state),
    }


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def test_plain_sets_and_argument_counters_take_the_split_path_the_rest_the_island(modules):
    flat = modules[1]
    module_level = [name for name in SPLIT if name != "AssignsNonlocal"]
    assert {name: getattr(flat, name).compile_path for name in module_level} == dict.fromkeys(module_level, "split")
    assert {name: getattr(flat, name).compile_path for name in ISLAND} == dict.fromkeys(ISLAND, "island")


@pytest.mark.parametrize("name", SPLIT)
def test_a_write_on_the_split_path_compiles_as_the_original_did(modules, name):
    """The original's graphs, breaks and recompiles (2.13; on 2.9 the original breaks the
    graph at forward effects in the HOP, so never more), its gradients, the state its
    last call left."""
    original, flat = modules
    want = _compiled(original, name, SPLIT[name])
    got = _compiled(flat, name, SPLIT[name])
    assert all(torch.equal(a, b) for a, b in zip(got["grads"], want["grads"], strict=True))
    assert _same(want["effect"], got["effect"]), (want["effect"], got["effect"])
    if TORCH_2_13:
        assert got["counts"] == want["counts"] and want["counts"][0] == 0, (want["counts"], got["counts"])
    else:
        assert all(g <= w for g, w in zip(got["counts"], want["counts"], strict=True)), (got["counts"], want["counts"])


@pytest.mark.parametrize("name", ISLAND)
def test_a_counter_or_an_append_stays_an_island_that_compiles_once(modules, name):
    """The effect lands on every call either way; the original recompiled on every call
    until dynamo gave the frame up (2.13), the island compiles once and breaks the graph."""
    original, flat = modules
    want = _compiled(original, name, ISLAND[name])
    got = _compiled(flat, name, ISLAND[name])
    assert all(torch.equal(a, b) for a, b in zip(got["grads"], want["grads"], strict=True))
    assert _same(want["effect"], got["effect"])
    breaks, graphs, given_up = got["counts"]
    assert (breaks, graphs, given_up) == (1, 2, 0), got["counts"]  # the graphs before and after the break
    if TORCH_2_13:
        assert want["counts"][2] > 0, want["counts"]


def test_a_plain_set_compiles_whole(modules):
    flat = modules[1]
    state = _State()
    x = torch.randn(3, requires_grad=True)
    torch._dynamo.reset()
    out = torch.compile(lambda t: flat.SetsArgumentAttribute(t * 1, state) * 2, backend="aot_eager", fullgraph=True)(x)
    out.sum().backward()
    torch._dynamo.reset()
    assert torch.equal(x.grad, torch.full_like(x, 6.0)) and torch.equal(state.last, x.detach() * 2)
