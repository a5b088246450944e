"""The split path under torch.compile (``inliner.runtime._split``): dynamo traces ``fwd``
as plain Python, the first-order op ``inliner::attach`` carries the custom backward.

Hand-written flat callables (what the engine emits, keywords included) beside their
expected eager behaviour: values, custom gradients, None gradients, per-call side
effects of a backward run by ``inliner::call_bwd``, non-tensor residuals, the
fallbacks to an eager island (a static one from the ``Spec``, one found while tracing),
and torch's own ``CrossMapLRN2d`` (fake tensors cannot run its body) never crashing a
compile.
"""

from __future__ import annotations

import re
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch._dynamo

from inliner import flatten
from inliner.runtime import CompileFallbackWarning, _split, custom_vjp
from tests.support import compile_checks as cc

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

LOG: list = []


@pytest.fixture(autouse=True)
def _fresh():
    from inliner.runtime import _fallback

    torch._dynamo.reset()
    LOG.clear()
    _fallback._fallback_names.clear()  # the fallback warning is once per Function
    yield
    torch._dynamo.reset()
    LOG.clear()


def _inputs():
    torch.manual_seed(0)
    return torch.randn(5, requires_grad=True), torch.randn(5, requires_grad=True)


def _compiled_matches_eager(fn, backend="aot_eager", fullgraph=True):
    """Three compiled calls against three eager ones: outputs, gradients, LOG."""
    expected, expected_log = cc.eager_calls(fn, _inputs, LOG)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
    for k in range(cc.CALLS):
        outputs, grads = cc.call_and_differentiate(compiled, _inputs())
        assert cc.same(outputs, expected[k][0]), f"call {k + 1}: outputs"
        assert cc.same(grads, expected[k][1]), f"call {k + 1}: gradients {grads} != {expected[k][1]}"
    assert cc.same_log(cc.log_snapshot(LOG), expected_log), (LOG, expected_log)
    LOG.clear()
    torch._dynamo.reset()


# -- flat callables, as the engine emits them ------------------------------------------------


def numpy_sin_fwd(x):
    return torch.from_numpy(np.sin(x.detach().numpy())), (x,)


def numpy_sin_bwd(residuals, g):
    (x,) = residuals
    return g * torch.cos(x) * 3  # not the true derivative: a dropped custom backward shows


NumpySin = custom_vjp(
    numpy_sin_fwd,
    numpy_sin_bwd,
    name="NumpySin",
    saved_for_backward_idx=(0,),
    compile_kind="opaque",
    compile_reason="forward calls numpy.sin",
    backward_kind="traceable",
)


def logged_fwd(x, w, k):
    return x * w * k, (w, k)


def logged_bwd(residuals, g):
    w, k = residuals
    LOG.append(("backward", k))
    return g * w * 2 * k, None, None


LoggedBackward = custom_vjp(
    logged_fwd,
    logged_bwd,
    name="LoggedBackward",
    saved_for_backward_idx=(0,),
    backward_kind="side_effecting",
    backward_reason="backward appends to module-level LOG",
    backward_nones=(1, 2),
)


def _numpy_then_logged(x, w):
    return NumpySin(x) * 2 + LoggedBackward(x, w, 3)


def test_numpy_forward_and_backward_side_effect_compile_whole():
    assert (NumpySin.compile_path, LoggedBackward.compile_path) == ("split", "split")
    _compiled_matches_eager(_numpy_then_logged)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_backward_side_effect_happens_on_every_backward(backend):
    _compiled_matches_eager(_numpy_then_logged, backend=backend)
    compiled = torch.compile(_numpy_then_logged, backend=backend, fullgraph=True)
    for _ in range(3):
        x, w = _inputs()
        compiled(x, w).sum().backward()
    assert LOG == [("backward", 3)] * 3
    assert w.grad is None  # a literal None of bwd's stays None


def test_no_higher_order_op_in_any_graph_and_attach_in_dynamo_s():
    result = cc.graphs_and_breaks(_numpy_then_logged, _inputs)
    assert result.ok, result.reason
    assert sum(result.details["breaks"].values()) == 0
    assert cc.higher_order_ops(result.details["graphs"]) == []
    dynamo_graph = result.details["graphs"][0]
    targets = [n.target for n in dynamo_graph.graph.nodes if n.op == "call_function"]
    # where thunder is loaded, attach is called through one node returning a tuple
    attach = _split.attach_as_tuple if _split.thunder_takes_it() else torch.ops.inliner.attach.default
    assert targets.count(attach) == 2
    backward_graph = result.details["graphs"][-1]
    assert "call_bwd" in backward_graph.code  # the opaque backward: an op, run at every backward


# -- residuals and outputs ---------------------------------------------------------------------


def _double(t):
    return t * 2


def residuals_fwd(x, w):
    y = x * w
    shape = x.shape
    return (y, shape[0]), (w, None, "tag", x.dtype, shape, (w, (1.5, True)), _double, [w])


def residuals_bwd(residuals, g, g_n):
    w, nothing, tag, dtype, shape, nested, fn, as_list = residuals
    assert nothing is None and tag == "tag" and dtype == torch.float32 and fn is _double
    assert isinstance(shape, torch.Size) and nested[1] == (1.5, True) and nested[0] is not None
    assert isinstance(as_list, list) and g_n is None  # a non-tensor output's gradient
    LOG.append(tag)
    return fn(g) * nested[0] * nested[1][0] + as_list[0], None


Residuals = custom_vjp(
    residuals_fwd,
    residuals_bwd,
    name="Residuals",
    backward_kind="side_effecting",
    backward_reason="backward appends to module-level LOG",
    backward_nones=(1,),
)


def test_residuals_of_every_kind_reach_the_backward_as_they_were():
    def body(x, w):
        y, n = Residuals(x, w)
        return y * n

    _compiled_matches_eager(body)


def nondiff_fwd(x):
    y = x * 2
    return (y, (y > 0).float()), ()


def nondiff_bwd(residuals, g, g_mask):
    return g * 3 + g_mask


NonDiff = custom_vjp(
    nondiff_fwd,
    nondiff_bwd,
    name="NonDiff",
    non_differentiable_idx=(1,),
    compile_kind="opaque",
    compile_reason="stands for a numpy forward",
    backward_kind="traceable",
)


def test_a_non_differentiable_output_does_not_require_grad():
    def body(x, w):
        y, mask = NonDiff(x)
        assert not mask.requires_grad
        return y * mask, mask

    _compiled_matches_eager(body)


def both_fwd(x, w):
    return x * w, (x, w)


def both_bwd(residuals, g):
    x, w = residuals
    LOG.append("both")
    return g * w * 3, g * x * 5  # a gradient for w even where w does not require grad


Both = custom_vjp(
    both_fwd,
    both_bwd,
    name="Both",
    backward_kind="side_effecting",
    backward_reason="backward appends to module-level LOG",
    backward_nones=(),
)


@pytest.mark.parametrize("w_requires_grad", [False, True])
def test_the_opaque_backward_s_gradient_for_an_input_without_grad_is_dropped(w_requires_grad):
    """``call_bwd`` gives an empty placeholder where nobody reads the gradient (w does not
    require grad): the compiled call's gradients, and the effect per call, are eager's."""
    for backend in ("aot_eager", "inductor"):
        results = []
        for fn in (Both, torch.compile(lambda x, w: Both(x, w), backend=backend, fullgraph=True)):
            torch.manual_seed(0)
            x, w = torch.randn(5, requires_grad=True), torch.randn(5, requires_grad=w_requires_grad)
            fn(x, w).sum().backward()
            results.append((x.grad, w.grad, list(LOG)))
            LOG.clear()
        (x_eager, w_eager, log_eager), (x_compiled, w_compiled, log_compiled) = results
        assert log_compiled == log_eager == ["both"]
        assert torch.allclose(x_compiled, x_eager)
        assert (w_compiled is None) == (w_eager is None) == (not w_requires_grad)
        assert w_compiled is None or torch.allclose(w_compiled, w_eager)


def test_double_backward_through_an_opaque_backward_is_an_error_never_a_silent_gradient():
    """Under a backend that runs attach's formula eagerly (``eager``), a double backward
    reaches ``call_bwd``, which has no formula of its own: it must raise, not warn and
    give a gradient (as an op without an autograd kernel would)."""
    x = torch.randn(5, requires_grad=True)
    compiled = torch.compile(lambda t: Both(t, t * 1), backend="eager", fullgraph=True)
    (g,) = torch.autograd.grad(compiled(x).sum(), x, create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeError, match="call_bwd"):
            torch.autograd.grad(g.sum(), x)


# -- fallbacks to the island, each with one warning -----------------------------------------------


def identity_fwd(x):
    return x, ()


def identity_bwd(residuals, g):
    LOG.append("identity")
    return g * 2


Identity = custom_vjp(
    identity_fwd,
    identity_bwd,
    name="Identity",
    backward_kind="side_effecting",
    backward_reason="backward appends to module-level LOG",
    backward_nones=(),
)


def view_fwd(x):
    return x.view(-1)[1:], ()


def view_bwd(residuals, g):
    LOG.append("view")
    return torch.cat([g[:1] * 0, g]) * 2


View = custom_vjp(
    view_fwd,
    view_bwd,
    name="View",
    backward_kind="side_effecting",
    backward_reason="backward appends to module-level LOG",
    backward_nones=(),
)


def test_an_output_that_views_an_input_falls_back_to_the_island():
    """The original's output shares the input's storage (a later in-place write to the
    input shows in it); attach's copy would not: the island keeps the original's view."""

    def body(x, w):
        y = View(x * 1)
        return y * w[1:]

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", CompileFallbackWarning)
        _compiled_matches_eager(body, fullgraph=False)
    messages = [str(w.message) for w in record if issubclass(w.category, CompileFallbackWarning)]
    assert len(messages) == 1 and "a view of one" in messages[0]
    x = torch.randn(5)
    y = torch.compile(lambda t: View(t), backend="aot_eager")(x)
    x.add_(1)
    assert torch.equal(y, x[1:])  # still a view, as the original's


def test_an_output_that_is_an_input_falls_back_to_the_island_with_one_warning():
    def body(x, w):
        return Identity(x) * w

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", CompileFallbackWarning)
        _compiled_matches_eager(body, fullgraph=False)
    messages = [str(w.message) for w in record if issubclass(w.category, CompileFallbackWarning)]
    assert len(messages) == 1 and "Identity" in messages[0] and "returns an input" in messages[0]


def dirty_fwd(x, w):
    x.mul_(2)
    return x, ()


def dirty_bwd(residuals, g):
    LOG.append("dirty")
    return g * 3, None


Dirty = custom_vjp(
    dirty_fwd,
    dirty_bwd,
    name="Dirty",
    dirty_idx=(0,),
    backward_kind="side_effecting",
    backward_reason="backward appends to module-level LOG",
    backward_nones=(1,),
)


def test_a_feature_the_split_path_does_not_carry_keeps_the_island_with_one_warning():
    assert Dirty.compile_path == "island"

    def body(x, w):
        return Dirty(x * 1, w) * w

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", CompileFallbackWarning)
        _compiled_matches_eager(body, fullgraph=False)
    messages = [str(w.message) for w in record if issubclass(w.category, CompileFallbackWarning)]
    assert len(messages) == 1 and "Dirty" in messages[0] and "mark_dirty" in messages[0]
    with pytest.raises(Exception, match="inliner: Dirty runs eagerly"):
        torch.compile(body, backend="aot_eager", fullgraph=True)(*_inputs())


class Box:
    def __init__(self, value):
        self.value = value


def boxed_fwd(x):
    return x * 2, (Box(x.shape[0] + 1.0), {"scale": 3.0, "x": x})


def boxed_bwd(residuals, g):
    box, config = residuals
    return g * box.value * config["scale"] + config["x"]


Boxed = custom_vjp(
    boxed_fwd, boxed_bwd, name="Boxed", compile_kind="opaque", compile_reason="r", backward_kind="traceable"
)


def keyed_fwd(x):
    return x * 2, ({"scale": x.shape[0] + 1.0, "x": x, "name": "k"},)


def keyed_bwd(residuals, g):
    (config,) = residuals
    return g * config["scale"] + config["x"]


Keyed = custom_vjp(
    keyed_fwd, keyed_bwd, name="Keyed", compile_kind="opaque", compile_reason="r", backward_kind="traceable"
)


def test_an_object_forward_made_for_backward_runs_as_an_island_never_a_bare_instance():
    """Dynamo has no runtime value of an object made while tracing (it would hand the
    layout an instance without the attributes fwd set: an AttributeError in backward
    where the original runs): the call breaks the graph, with one warning."""

    def body(x, w):
        return Boxed(x * 1) * w

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", CompileFallbackWarning)
        _compiled_matches_eager(body, fullgraph=False)
    messages = [str(w.message) for w in record if issubclass(w.category, CompileFallbackWarning)]
    assert len(messages) == 1 and "Boxed" in messages[0] and "(Box)" in messages[0], messages
    with pytest.raises(Exception, match="inliner: Boxed runs eagerly"):
        torch.compile(body, backend="aot_eager", fullgraph=True)(*_inputs())


def test_a_dict_residual_made_in_forward_crosses_the_op_key_by_key():
    def body(x, w):
        return Keyed(x * 1) * w

    _compiled_matches_eager(body)


RAISING = """
import numpy as np
import torch


class NotImplementedBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.from_numpy(np.sin(x.detach().numpy())) * 2

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError("the backward is not implemented")


class PureForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        return x * w

    @staticmethod
    def backward(ctx, g):
        if ctx.needs_input_grad[1]:
            raise NotImplementedError("no gradient for w")
        return g * 3, None
"""


@pytest.mark.parametrize("name,w_grad", [("NotImplementedBackward", None), ("PureForward", True)])
def test_a_backward_that_raises_raises_on_backward_not_when_the_forward_compiles(name, w_grad):
    """Traced, such a backward would raise while AOTAutograd compiles the forward (it
    traces the backward then): a forward the original runs would fail. It runs for real
    on backward instead, and raises there, as the original does."""
    from tests.support.harness import load_module

    result = flatten(RAISING, path="raising.py")
    assert name in result.flattened, [d.format() for d in result.diagnostics]
    for module in (load_module(RAISING, "raising_original"), load_module(result.source, "raising_flat")):
        fn = getattr(module, name)
        apply = fn.apply if isinstance(fn, type) else fn
        torch._dynamo.reset()

        def body(x, w, apply=apply):
            return apply(x * 1) if w_grad is None else apply(x * 1, w)

        x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=bool(w_grad))
        out = torch.compile(body, backend="aot_eager")(x, w)  # the forward runs
        with pytest.raises(NotImplementedError):
            out.sum().backward()


def test_an_opaque_backward_without_known_nones_stays_an_island():
    flat = custom_vjp(logged_fwd, logged_bwd, name="Unknown", compile_kind="opaque", compile_reason="r")
    assert flat.compile_path == "island"


def hidden_none_fwd(x, w):
    return x * w, (w,)


def hidden_none_bwd(residuals, g):
    (w,) = residuals
    grad_w = None
    LOG.append("hidden")
    return g * w, grad_w


HiddenNone = custom_vjp(
    hidden_none_fwd,
    hidden_none_bwd,
    name="HiddenNone",
    backward_kind="side_effecting",
    backward_reason="backward appends to module-level LOG",
    backward_nones=(),  # what a wrong static analysis would claim
)


def test_a_none_the_engine_did_not_see_is_an_error_never_a_zero_gradient():
    compiled = torch.compile(lambda x, w: HiddenNone(x, w), backend="aot_eager", fullgraph=True)
    x, w = _inputs()
    with pytest.raises(RuntimeError, match="HiddenNone's backward gave None for input 1"):
        compiled(x, w).sum().backward()


# -- torch's CrossMapLRN2d: fake tensors cannot run it; the original compiles (dynamo breaks) ----


def _cross_map_lrn2d_modules():
    source = Path(torch.nn.modules._functions.__file__).read_text()
    start = source.index("class CrossMapLRN2d")
    end = source.index("\nclass ", start + 1)
    original = "import torch\nfrom torch.autograd import Function\n\n\n" + source[start:end]
    result = flatten(original, path="lrn.py")
    assert "CrossMapLRN2d" in result.flattened
    modules = []
    for text in (original, result.source):
        namespace: dict = {}
        exec(compile(text, "lrn.py", "exec"), namespace)
        modules.append(namespace["CrossMapLRN2d"])
    return modules


def test_cross_map_lrn2d_compiles_where_the_original_does():
    original, flat = _cross_map_lrn2d_modules()
    assert flat.compile_path != "graph"
    assert re.search(r"resize_as_", flat.compile_reason or "")
    torch.manual_seed(0)
    x = torch.randn(2, 4, 3, 3, requires_grad=True)
    expected = original.apply(x, 3)
    (expected_grad,) = torch.autograd.grad(expected.sum(), x)
    for fn in (lambda t: original.apply(t, 3), lambda t: flat(t, 3)):
        torch._dynamo.reset()
        y = torch.compile(fn, backend="aot_eager")(x)
        (grad,) = torch.autograd.grad(y.sum(), x)
        assert torch.allclose(y, expected) and torch.allclose(grad, expected_grad)


# -- on-disk caches (limit 8 of the experiment) ---------------------------------------------------


def test_the_cache_tag_changes_with_the_backward_s_code():
    """AOTAutograd's cache keys on dynamo's graph, where the backward is only ``attach``:
    its ``tag`` argument must change when the code behind the backward does."""
    namespace: dict = {}
    exec("def bwd(r, g):\n    return g * 2\n", namespace)
    first = custom_vjp(numpy_sin_fwd, namespace["bwd"], name="Tagged", compile_kind="opaque", backward_kind="traceable")
    exec("def bwd(r, g):\n    return g * 3\n", namespace)
    second = custom_vjp(
        numpy_sin_fwd, namespace["bwd"], name="Tagged", compile_kind="opaque", backward_kind="traceable"
    )
    tags = [_split.cache_tag(_spec_of(f)) for f in (first, second, first)]  # type: ignore[arg-type]
    assert tags[0] != tags[1] and tags[0] == tags[2]
    result = cc.graphs_and_breaks(lambda x, w: first(x) * w, _inputs)
    # where thunder is loaded, attach is called through one node returning a tuple
    target = _split.attach_as_tuple if _split.thunder_takes_it() else torch.ops.inliner.attach.default
    (attach,) = [n for n in result.details["graphs"][0].graph.nodes if n.target is target]
    assert attach.args[-1] == tags[0]


def _spec_of(flat):
    return types.SimpleNamespace(fwd=flat.fwd, bwd=flat.bwd, module=flat.__module__, name=flat.__name__)


# -- None gradients given before a starred element (what the engine reads of bwd's returns) -----

STARRED_NONES = """\
import torch

LOG = []


class Gate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, k):
        ctx.save_for_backward(w)
        return x * w * k

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        LOG.append("gate")
        return (g * w * 3, *[None] * 2)
"""


def test_nones_in_a_starred_list_take_the_split_path_and_stay_none():
    """``return (grad, *[None] * 2)`` (torch's vendored RMSNorm spells its Nones so): the
    engine knows positions 1 and 2 are None, so an opaque backward can run in
    ``call_bwd`` and ``w`` gets no gradient, as from the original."""
    result = flatten(STARRED_NONES, path="gate.py")
    module = types.ModuleType("split_gate")
    sys.modules[module.__name__] = module
    exec(compile(result.source, "gate.py", "exec"), module.__dict__)
    module.LOG = LOG
    gate = module.Gate
    assert gate.compile_path == "split"

    def body(x, w):
        return gate(x, w, 2.0)

    _compiled_matches_eager(body)
    compiled = torch.compile(body, backend="aot_eager", fullgraph=True)
    for _ in range(cc.CALLS):
        x, w = _inputs()
        compiled(x, w).sum().backward()
        assert w.grad is None and torch.allclose(x.grad, w.detach() * 3 * 1.0)
    assert LOG == ["gate"] * cc.CALLS  # one per backward (_compiled_matches_eager cleared its own)


_TAGGED_MODULE = """
import sys
import types
from inliner.runtime import custom_vjp, _split

def fwd(x, mode="alpha"):
    scale = (lambda y: y * 2.5)(x)
    return (scale if mode in {"alpha", "beta", "gamma"} else x), (x,)

def bwd(residuals, g):
    return g * 3

Tagged = custom_vjp(fwd, bwd, name="Tagged", compile_kind="opaque", backward_kind="traceable")
if "hold" in sys.argv:  # references a trace may hold: marshal's bytes depend on them
    held = [fwd.__code__.co_consts, *fwd.__code__.co_consts, bwd.__code__.co_consts]
spec = types.SimpleNamespace(fwd=Tagged.fwd, bwd=Tagged.bwd, module=Tagged.__module__, name=Tagged.__name__)
print(_split.cache_tag(spec))
"""


def test_the_cache_tag_is_the_same_in_every_process(tmp_path):
    """The tag of the same code is the same in two fresh processes (with another hash
    seed, and with references held to the code's constants): AOTAutograd's cache hits."""
    import os
    import subprocess
    import sys

    (tmp_path / "tagged_module.py").write_text(_TAGGED_MODULE)
    root = str(Path(__file__).resolve().parents[2])
    tags = []
    for seed, hold in (("1", ""), ("2", "hold")):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=os.pathsep.join((str(tmp_path), root)))
        run = subprocess.run(
            [sys.executable, str(tmp_path / "tagged_module.py"), hold], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        tags.append(run.stdout.strip())
    assert tags[0] == tags[1] and tags[0].startswith("__main__.Tagged:")


def test_the_cache_tag_changes_with_a_constant_of_nested_code():
    """A constant inside a nested function of fwd changes the tag; the same source
    compiled again (other code objects) does not."""
    from inliner.runtime import _split

    def made(factor: str):
        namespace: dict = {}
        source = f"def fwd(x):\n    inner = lambda y: y * {factor}\n    return inner(x), (x,)\n"
        exec(compile(source, "<tagged>", "exec"), namespace)
        return custom_vjp(namespace["fwd"], numpy_sin_bwd, name="Nested", compile_kind="opaque")

    tags = [_split.cache_tag(_spec_of(made(f))) for f in ("2.5", "2.5", "3.5")]
    assert tags[0] == tags[1] != tags[2]


def test_the_cache_tag_is_computed_at_the_first_trace_not_when_the_function_is_made(monkeypatch):
    """Defining flat callables (an import of a rewritten module) hashes nothing; the first
    compile of a split call computes its tag once."""
    from inliner.runtime import _split

    calls: list = []
    real = _split.cache_tag
    monkeypatch.setattr(_split, "cache_tag", lambda spec: calls.append(spec.name) or real(spec))
    split = custom_vjp(numpy_sin_fwd, numpy_sin_bwd, name="Lazy", compile_kind="opaque", backward_kind="traceable")
    custom_vjp(numpy_sin_fwd, numpy_sin_bwd, name="LazyGraph")  # the graph path, with a split for objects
    assert calls == []
    compiled = torch.compile(lambda x: split(x) * 2, backend="aot_eager")
    for _ in range(2):
        compiled(_inputs()[0]).sum().backward()
    assert calls == ["Lazy"]


_COMPILED_FIRST = """
import torch
import torch._dynamo
from torch._inductor.decomposition import select_decomp_table
select_decomp_table()  # as inductor's first compile does: it caches the table
from inliner.runtime import custom_vjp

def fwd(x):
    return x * 2, ()

def bwd(residuals, g):
    return g * 3

Late = custom_vjp(fwd, bwd, name="Late", compile_kind="opaque", backward_kind="traceable")
print(torch.ops.inliner.attach.default in select_decomp_table())
"""


def test_inductor_decomposes_attach_when_it_compiled_before_the_first_function():
    """A model compiled before the first flattened Function is defined: inductor's cached
    decomposition table still gets ``attach`` (else every forward pays a Python op call)."""
    import os
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=root)
    run = subprocess.run([sys.executable, "-c", _COMPILED_FIRST], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"
