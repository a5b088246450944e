"""torch.compile on Functions whose bodies are not pure torch, or that take objects.

The hand-written pairs of tests/support/compile_kind_cases.py (an original ``autograd.Function``
beside the flat equivalent the engine emits, with its ``compile_kind``), through:

| test | the rewrite must |
| --- | --- |
| ``test_eager`` | three eager calls: outputs, custom gradients and the side-effect log equal the original's |
| ``test_fullgraph`` | ``torch.compile(fullgraph=True)`` (aot_eager) work wherever it works for the original (except ``FULLGRAPH_ORIGINAL_ONLY``); where it fails, the error names the Function, why, and the override |
| ``test_three_compiled_calls`` | three calls of ``torch.compile(fn)`` (aot_eager, inductor): outputs, custom gradients and the side-effect log equal eager, as the original's do |

and the mechanism behind them (``inliner.runtime._dynamo``): one plain graph node for object
arguments, dynamo's guards on what the objects hold, the one-line fallback warning, and
no leak of flat callables made by a factory. The original's outcome is asserted too.
"""

from __future__ import annotations

import gc
import warnings
import weakref

import pytest
import torch
import torch._dynamo

from inliner.runtime import CompileFallbackWarning, custom_vjp
from tests.support import compile_checks as cc
from tests.support import compile_kind_cases as ck

CASES = sorted(ck.CASES)

#: Where the original compiles whole under fullgraph=True and the rewrite, an eager island,
#: cannot (measured on torch 2.13 and 2.9; the rewrite's error is asserted).
FULLGRAPH_ORIGINAL_ONLY = {
    "numpy_body": "dynamo traces numpy as torch; fake tensors cannot run the flat forward's numpy",
    "forward_side_effect": "dynamo replays a forward's append to an outside list after the graph "
    "(not a backward's); the flat forward runs on fake tensors, so its effects must stay eager",
    "list_argument_mutated": "same as forward_side_effect, for a list passed in",
}

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("error::inliner.runtime.CompileFallbackWarning"),
]


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    from inliner import runtime

    torch._dynamo.reset()
    ck.SIDE_EFFECT_LOG.clear()
    runtime._fallback._fallback_warned.clear()  # the fallback warning is once per Function and type
    yield
    torch._dynamo.reset()
    ck.SIDE_EFFECT_LOG.clear()


def _eager(case: ck.Case, rewritten: bool) -> tuple[list, list | None]:
    return cc.eager_calls(case.body(rewritten), ck.make_inputs, ck.SIDE_EFFECT_LOG)


@pytest.mark.parametrize("name", CASES)
def test_eager(name):
    case = ck.CASES[name]
    assert case.flat.compile_kind == case.kind
    (original, original_log), (rewrite, rewrite_log) = _eager(case, False), _eager(case, True)
    for (o_out, o_grads), (r_out, r_grads) in zip(original, rewrite):
        assert cc.same(o_out, r_out, 0, 0) and cc.same(o_grads, r_grads, 0, 0)
    assert cc.same_log(original_log, rewrite_log)


def _original_fullgraph(case: ck.Case) -> str | None:
    if torch.__version__.startswith("2.9."):
        return ck.ORIGINAL_FULLGRAPH_29.get(case.name, case.original_fullgraph)
    return case.original_fullgraph


def _original_compile(case: ck.Case) -> str | None:
    if torch.__version__.startswith("2.9."):
        return ck.ORIGINAL_COMPILE_29.get(case.name, case.original_compile)
    return case.original_compile


def _carried(case: ck.Case) -> bool:
    """Whether this torch's dynamo lets the shim carry the case's arguments into its graph."""
    from inliner.runtime import _dynamo

    return not case.passes_objects or _dynamo._HANDS_OVER_OBJECTS


def _compiled_whole(case: ck.Case) -> bool:
    """Whether the case's call is compiled into the graph: by a plan, or, where this
    dynamo cannot hand the objects to one (torch 2.9), by the split path."""
    from inliner.runtime import _dynamo

    split = _dynamo._split is not None and not _dynamo._split.thunder_refuses_attach()
    return _carried(case) or (case.kind == "traceable" and split)


@pytest.mark.parametrize("name", CASES)
def test_fullgraph(name):
    case = ck.CASES[name]
    expected = _eager(case, False)[0][0]
    original = cc.fullgraph(case.body(False), ck.make_inputs, expected)
    rewrite = cc.fullgraph(case.body(True), ck.make_inputs, expected)
    if _original_fullgraph(case) is None:
        assert original.ok, original.reason
    else:
        assert not original.ok and _original_fullgraph(case) in original.details["error"], original.reason
    if case.kind == "traceable" and _compiled_whole(case):
        assert rewrite.ok, rewrite.reason
        return
    assert not rewrite.ok
    error = rewrite.details["error"]
    assert cc.island_message_ok(error, case.flat.__name__), error
    if case.kind != "traceable":
        assert "(forward calls" in error or "appends to" in error
    assert not original.ok or name in FULLGRAPH_ORIGINAL_ONLY or not _compiled_whole(case), original.reason


#: inductor compiles C++ on a 2-core machine: one case per mechanism (an island, each
#: object kind). aot_eager runs every case.
INDUCTOR_CASES = ["backward_side_effect", "dataclass_argument", "module_argument", "lambda_argument"]


@pytest.mark.parametrize("name,backend", [(n, "aot_eager") for n in CASES] + [(n, "inductor") for n in INDUCTOR_CASES])
def test_three_compiled_calls(name, backend):
    case = ck.CASES[name]
    expected, expected_log = _eager(case, False)
    for rewritten in (False, True):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", CompileFallbackWarning)
            result = cc.compiled_calls(
                case.body(rewritten), ck.make_inputs, backend, expected, ck.SIDE_EFFECT_LOG, expected_log
            )
        if not rewritten and _original_compile(case) is not None:
            assert not result.ok and _original_compile(case) in result.details.get("error", ""), result.reason
            continue
        assert result.ok, f"{'rewrite' if rewritten else 'original'}: {result.reason}"
        fallbacks = [w for w in record if issubclass(w.category, CompileFallbackWarning)]
        # where this dynamo cannot carry the arguments: an eager island, one warning at most
        # (once per Function and type in a process)
        assert not fallbacks if _compiled_whole(case) or not rewritten else len(fallbacks) <= 1


# ----------------------------------------------------------------- the mechanism


def _graphs(fn, *inputs, fullgraph=True):
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=capture, fullgraph=fullgraph)(*inputs)
    return graphs


@pytest.mark.parametrize("name", ["dataclass_argument", "dataclass_made_inside", "module_argument", "lambda_argument"])
def test_object_arguments_make_one_plain_call_node(name):
    case = ck.CASES[name]
    if not _carried(case):
        pytest.skip("this dynamo (torch 2.9) cannot hand a module or a function over: an eager island")
    (gm,) = _graphs(case.body(True), *ck.make_inputs())
    calls = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is case.flat.objects_call]
    assert len(calls) == 1
    assert not any(isinstance(n.target, torch._ops.HigherOrderOperator) for n in gm.graph.nodes)
    assert "higher_order" not in gm.code
    key, *leaves = calls[0].args
    assert isinstance(key, int)
    if name == "module_argument":  # the parameters are graph inputs: dynamo guards them
        assert [leaf.op for leaf in leaves[:3]] == ["placeholder"] * 3


def test_plain_arguments_keep_the_flat_call_node():
    (gm,) = _graphs(_plain, *ck.make_inputs())
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [_PLAIN.call]


def _plain_fwd(x, s):
    return x * s, ()


def _plain_bwd(residuals, g):
    return g * 3, None


_PLAIN = custom_vjp(_plain_fwd, _plain_bwd, name="Plain")


def _plain(x):
    return _PLAIN(x, 2.0)


@pytest.mark.parametrize("name", ["module_argument", "lambda_argument", "dataclass_argument"])
def test_fx_keeps_one_leaf_node_and_the_custom_backward_with_object_arguments(name):
    """fx holds no module or function as a node argument: they are bound into the target."""
    case = ck.CASES[name]
    gm = torch.fx.symbolic_trace(lambda x: case.body(True)(x))
    nodes = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert [n for n in nodes if getattr(n.target, "inliner_flat", n.target) is case.flat] == nodes[-1:]
    expected = _eager(case, False)[0][0]
    assert cc.same(cc.call_and_differentiate(gm, ck.make_inputs())[1], expected[1])


@pytest.mark.parametrize("name", ["forward_side_effect", "backward_side_effect"])
def test_strict_export_of_an_island_exports_its_call(name):
    """torch.export has no graph breaks: there the island's call is one graph node, run on
    fake tensors as the original's body is (its effects happen at export time only)."""
    case = ck.CASES[name]

    class Wrapper(torch.nn.Module):
        def forward(self, x):
            return case.body(True)(x)

    (x,) = ck.make_inputs()
    exported = torch.export.export(Wrapper(), (x.detach(),), strict=True)
    assert "higher_order" not in exported.graph_module.code
    assert torch.allclose(exported.module()(x.detach()), case.body(False)(x.detach()))


def test_dynamo_guards_what_the_objects_hold():
    """A scalar field, a module's mode and its parameters: changed after the first compile,
    the compiled call follows them as eager does (a recompile or a graph input)."""

    class Gate(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.k = 2.0

        def forward(self, x):
            return self.lin(x) * (self.k if self.training else -self.k)

    from inliner.runtime import _dynamo

    cfg = ck.Config(torch.ones(4), 2.0)
    gate = Gate()
    if not _dynamo._HANDS_OVER_OBJECTS:  # torch 2.9: the module makes an eager island
        warnings.simplefilter("ignore", CompileFallbackWarning)
    compiled_cfg = torch.compile(lambda x: ck.ScaleByFlat(x, cfg), backend="aot_eager")
    compiled_gate = torch.compile(lambda x: ck.ApplyModuleFlat(x, gate), backend="aot_eager")
    changes = [
        lambda: setattr(cfg, "scale", 5.0),
        lambda: setattr(cfg, "weight", torch.full((4,), 3.0)),
        lambda: cfg.weight.mul_(2),
        gate.eval,
        lambda: setattr(gate, "k", 7.0),
        lambda: gate.lin.weight.data.add_(1),
        lambda: setattr(gate.lin, "bias", torch.nn.Parameter(torch.zeros(4))),
    ]
    x = torch.randn(4)
    for change in [lambda: None, *changes]:
        change()
        assert torch.equal(compiled_cfg(x), ck.ScaleByFlat(x, cfg))
        assert torch.allclose(compiled_gate(x), ck.ApplyModuleFlat(x, gate))


class _Opaque:
    """No mechanism carries it: a plain object with ``__slots__``."""

    __slots__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, t):
        return t * self.factor


def _split_call_nodes(fn, *inputs):
    (gm,) = _graphs(fn, *inputs)
    return [n for n in gm.graph.nodes if n.target is torch.ops.inliner.attach.default]


def test_an_argument_no_plan_carries_takes_the_split_path():
    """No plan carries a plain object into one graph node; the split path does: dynamo
    traces fwd with the object as a Python value (it was an eager island, one warning)."""
    opaque = _Opaque(2.0)
    fn = lambda x: ck.ApplyFnFlat(x, opaque) + 1
    compiled = torch.compile(fn, backend="aot_eager", fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        for _ in range(3):
            x = torch.randn(4, requires_grad=True)
            compiled(x).sum().backward()
            assert torch.equal(x.grad, torch.full((4,), 3.0))  # the custom backward: 2 * 1.5
    torch._dynamo.reset()
    assert len(_split_call_nodes(fn, torch.randn(4, requires_grad=True))) == 1


def test_a_function_reading_a_global_tensor_takes_the_split_path():
    """AOTAutograd would meet the global tensor while running on fake ones, so no plan
    carries such a function; dynamo tracing fwd reads it as it reads any global."""
    fn = lambda x: ck.ApplyFnFlat(x, _reads_global) + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        got = torch.compile(fn, backend="aot_eager", fullgraph=True)(torch.ones(4))
    assert torch.equal(got, torch.ones(4) * _SHIFT + 1)
    torch._dynamo.reset()
    assert len(_split_call_nodes(fn, torch.ones(4, requires_grad=True))) == 1


_SHIFT = torch.full((4,), 2.0)


def _reads_global(t):
    return t * _SHIFT


def test_a_side_effecting_island_runs_its_bodies_untraced_on_every_call():
    """Nothing inside the island is compiled: dynamo makes graphs of the code around it only."""
    compiled = torch.compile(lambda x: ck.FwdLogFlat(x) + 1, backend="aot_eager")
    for _ in range(3):
        compiled(torch.randn(4, requires_grad=True)).sum().backward()
    assert ck.SIDE_EFFECT_LOG == ["forward"] * 3
    entries = torch._C._dynamo.eval_frame._debug_get_cache_entry_list
    assert not entries(ck.fwd_log_fwd.__code__) and not entries(ck.fwd_log_bwd.__code__)


def test_flat_callables_made_by_a_factory_are_not_kept_alive_by_dynamo():
    def make():
        return custom_vjp(_plain_fwd, _plain_bwd, name="Made")

    flat = make()
    torch.compile(lambda x: flat(x, 2.0), backend="eager")(torch.randn(2))  # noqa: F821 (flat is deleted below, after the call)
    ref = weakref.ref(flat)
    del flat
    torch._dynamo.reset()
    gc.collect()
    assert ref() is None


def test_compile_kind_is_checked():
    with pytest.raises(ValueError, match="compile_kind must be one of"):
        custom_vjp(_plain_fwd, _plain_bwd, name="Bad", compile_kind="pure")


# ----------------------------------------------------------------- thunder


@pytest.mark.thunder
@pytest.mark.parametrize(
    "name",
    [
        "forward_side_effect",
        "backward_side_effect",
        "list_argument_mutated",
        "numpy_body",
        "fake_tensor_rejecting",
        "dataclass_argument",
        "module_argument",
        "lambda_argument",
    ],
)
def test_thunder_jit_runs_the_rewrite_no_worse_than_the_original(name):
    """thunder.jit interprets Python: a Function's side effects happen while it traces (once),
    numpy meets its proxies. The rewrite (its lookaside is on the island too) does what the
    original does: the same outputs, gradients and log, or an error of the same type."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thunder = pytest.importorskip("thunder")
    case = ck.CASES[name]
    outcomes = []
    for rewritten in (False, True):
        ck.SIDE_EFFECT_LOG.clear()
        jitted = thunder.jit(case.body(rewritten))
        try:
            results = [cc.call_and_differentiate(jitted, ck.make_inputs()) for _ in range(cc.CALLS)]
        except Exception as exc:
            outcomes.append(type(exc))
            continue
        outcomes.append((results, cc.log_snapshot(ck.SIDE_EFFECT_LOG)))
    original, rewrite = outcomes
    if isinstance(original, type):
        assert rewrite is original or not isinstance(rewrite, type), (original, rewrite)
        return
    assert not isinstance(rewrite, type), rewrite
    for (o_out, o_grads), (r_out, r_grads) in zip(original[0], rewrite[0]):
        assert cc.same(o_out, r_out) and cc.same(o_grads, r_grads)
    assert cc.same_log(original[1], rewrite[1])
