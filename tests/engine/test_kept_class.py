"""A Function its module uses as a class keeps a class (``runtime.FlatClass``).

The golden cases ``kept_class_*`` execute every supported use side by side with the
original; this file checks what they cannot: ONNX export still finds ``symbolic``, a
subclass written in another module fails loudly instead of silently running the
flattened class's bodies, and each use only an ``autograd.Function`` answers is refused
with its reason and position.
"""

from __future__ import annotations

import textwrap
import warnings

import pytest
import torch

import inliner.runtime
from inliner import flatten
from tests.support.golden import GOLDEN
from tests.support.harness import load_module


def _flatten(source: str, **kwargs):
    return flatten(textwrap.dedent(source), path="m.py", **kwargs)


# ----------------------------------------------------------------- ONNX


def _mappings(module) -> torch.nn.Module:
    """A model calling the golden case's two tensor-parallel mappings."""

    class Mappings(torch.nn.Module):
        def forward(self, x):
            y = module.copy_to_tensor_model_parallel_region(x)
            return module.reduce_from_tensor_model_parallel_region(y * 2)

    return Mappings()


def _onnx_node_kinds(module) -> list[str]:
    """The ONNX graph torch.onnx's TorchScript exporter makes (no ``onnx`` package needed)."""
    exporter = pytest.importorskip("torch.onnx._internal.torchscript_exporter.utils")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph, _, _ = exporter._model_to_graph(_mappings(module), (torch.randn(4),))
    return [node.kind() for node in graph.nodes()]


def test_onnx_export_uses_the_symbolic_as_the_original_does():
    case = GOLDEN / "kept_class_symbolic"
    original = load_module((case / "input.py").read_text(), "symbolic_original")
    rewritten = load_module((case / "output.py").read_text(), "symbolic_rewritten")
    kinds = _onnx_node_kinds(rewritten)
    assert kinds == _onnx_node_kinds(original)
    assert "onnx::Identity" in kinds and "prim::PythonOp" not in kinds


def test_onnx_export_without_the_symbolic_differs(monkeypatch):
    """The check above can fail: without ``symbolic`` on the carriers the exporter inlines forward."""

    def without_symbolic(*args, symbolic=None, **kwargs):
        return custom_vjp(*args, **kwargs)

    custom_vjp = inliner.runtime.custom_vjp
    monkeypatch.setattr(inliner.runtime, "custom_vjp", without_symbolic)
    rewritten = load_module((GOLDEN / "kept_class_symbolic" / "output.py").read_text(), "symbolic_dropped")
    assert "onnx::Identity" not in _onnx_node_kinds(rewritten)


def test_every_carrier_carries_the_symbolic():
    rewritten = load_module((GOLDEN / "kept_class_symbolic" / "output.py").read_text(), "symbolic_carriers")
    cls = rewritten._ReduceFromModelParallelRegion
    carriers = cls.apply.carriers()
    assert carriers.eager.symbolic is cls.symbolic
    assert carriers.functorch.symbolic is cls.symbolic


# ----------------------------------------------------------------- subclasses elsewhere

_KEPT = """
import torch


class Scale(torch.autograd.Function):
    factor = 2.0

    @staticmethod
    def forward(ctx, x):
        return x * Scale.factor

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


def test_a_subclass_in_another_module_fails_where_it_is_defined():
    result = _flatten(_KEPT)
    assert result.flattened == ("Scale",)
    kept = load_module(result.source, "kept_base")
    other = "class Twice(Scale):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n"
    with pytest.raises(TypeError, match=r"class Twice derives from Scale, which inliner flattened"):
        exec(other, {"Scale": kept.Scale})
    # what the rewrite of a subclass in the same module does is allowed
    exec("class Ok(Scale):\n    apply = staticmethod(Scale.apply)\n", {"Scale": kept.Scale})


# ----------------------------------------------------------------- what stays refused

_FUNCTION = """
class {name}(torch.autograd.Function):
{extra}
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


def _module(extra: str = "", after: str = "", name: str = "F") -> str:
    body = textwrap.indent(textwrap.dedent(extra), "    ") if extra.strip() else ""
    return "import torch\n\n" + _FUNCTION.format(name=name, extra=body) + "\n" + textwrap.dedent(after)


REFUSED = {
    "isinstance in a tuple": (
        _module(after="def f(x):\n    return isinstance(x, (F, int))\n"),
        "INL112",
        "`isinstance(...)`",
    ),
    "type of the class": (_module(after="T = type(F)\n"), "INL112", "`type(...)`"),
    "getattr of a removed member": (
        _module(after="f = getattr(F, 'forward')\n"),
        "INL112",
        "`F.forward` here is a member the flat form removes",
    ),
    "getattr of a computed name": (
        _module(after="def f(n):\n    return getattr(F, n)\n"),
        "INL112",
        "names an attribute the engine cannot read",
    ),
    "instance": (_module(after="f = F()\n"), "INL112", "`F(...)` here makes an instance"),
    "unknown attribute": (
        _module(after="n = F.calls\n"),
        "INL112",
        "neither defined by the class nor set in this module",
    ),
    "a Function attribute": (_module(after="n = F.is_traceable\n"), "INL112", "only a torch.autograd.Function has"),
    "vmap rule assigned": (
        _module(after="F.generate_vmap_rule = True\n"),
        "INL112",
        "`F.generate_vmap_rule` is assigned",
    ),
    "symbolic assigned": (_module(after="F.symbolic = print\n"), "INL112", "`F.symbolic` is assigned"),
    "apply assigned": (_module(after="F.apply = print\n"), "INL112", "`F.apply` is assigned"),
    "apply overridden": (
        _module("@classmethod\ndef apply(cls, *args):\n    return super().apply(*args)\n"),
        "INL105",
        "defines `apply`",
    ),
    "legacy __init__": (_module("def __init__(self):\n    pass\n"), "INL105", "defines `__init__`"),
    "class body reads forward": (
        _module(after="").replace("        return g * 3\n", "        return g * 3\n\n    fwd = forward\n"),
        "INL105",
        "its class body reads `forward`",
    ),
    "super in forward": (_module().replace("return x * 2", "return super().forward(ctx, x)"), "INL105", "uses `super`"),
    "__class__ in backward": (
        _module().replace("return g * 3", "return g * __class__.k"),
        "INL105",
        "uses `__class__`",
    ),
    "classmethod symbolic": (
        _module("@classmethod\ndef symbolic(cls, g, x):\n    return x\n"),
        "INL105",
        "`symbolic` is not a staticmethod",
    ),
    "class-level if": (_module("if True:\n    k = 1\n"), "INL105", "class-level statement"),
    "subclass in a function": (
        _module(after="def make():\n    class G(F):\n        pass\n\n    return G\n"),
        "INL112",
        "its subclass G is defined in another scope",
    ),
    "subclass with a metaclass": (
        _module(after="class G(F, metaclass=type):\n    pass\n"),
        "INL112",
        "its subclass G also has other bases or keywords",
    ),
    "name bound twice": (_module(after="G = F\nF = None\n"), "INL112", "bound more than once"),
    "cls rebound": (
        _module("@classmethod\ndef helper(cls):\n    cls = None\n    return cls\n"),
        "INL112",
        "`helper` rebinds `cls`",
    ),
    "cls used and the name bound twice": (
        _module()
        .replace("@staticmethod\n    def backward(ctx, g)", "@classmethod\n    def backward(cls, ctx, g)")
        .replace("return g * 3", "return cls.apply(g)")
        + "\nF = None\n",
        "INL105",
        "no name certainly means the class",
    ),
    "cls used in a decorated class": (
        _module()
        .replace("@staticmethod\n    def backward(ctx, g)", "@classmethod\n    def backward(cls, ctx, g)")
        .replace("return g * 3", "return cls.apply(g)")
        .replace("class F(", "@functools.lru_cache\nclass F(")
        .replace("import torch\n", "import functools\n\nimport torch\n"),
        "INL105",
        "no name certainly means the class",
    ),
}


@pytest.mark.parametrize("source,code,fragment", REFUSED.values(), ids=REFUSED.keys())
def test_refused_with_reason(source, code, fragment):
    result = flatten(source, path="m.py")
    assert result.source == source, "a refused class leaves the file untouched"
    (diagnostic,) = [d for d in result.diagnostics if d.name == "F"]
    assert diagnostic.code == code and fragment in diagnostic.message, diagnostic.message


def test_refusal_points_at_the_use():
    source = _module(after="def f(x):\n    return isinstance(x, F)\n")
    (diagnostic,) = flatten(source, path="m.py").diagnostics
    line = source.splitlines()[diagnostic.line - 1]
    assert line[diagnostic.column - 1 : diagnostic.end_column - 1] == "isinstance(x, F)"


# ----------------------------------------------------------------- what is kept, and what is not


def test_only_apply_uses_stay_a_flat_callable():
    """``cls.apply`` in a classmethod backward needs no class: the flat callable answers it."""
    source = _module().replace("@staticmethod\n    def backward(ctx, g)", "@classmethod\n    def backward(cls, ctx, g)")
    source = source.replace("return g * 3", "return cls.apply(g)") + "\ny = F.apply\n"
    result = flatten(source, path="m.py")
    assert "F = custom_vjp(" in result.source and "FlatClass" not in result.source
    assert "return F.apply(g)" in result.source and "y = F\n" in result.source


def test_getattr_with_a_literal_name_is_an_attribute_use():
    source = _module(
        "k = 2.0\n", after="def f():\n    setattr(F, 'n', 1)\n    return getattr(F, 'k') + getattr(F, 'n', 0)\n"
    )
    result = flatten(source, path="m.py")
    assert result.flattened == ("F",) and "class F(FlatClass):" in result.source


def test_selecting_a_subclass_rewrites_its_family():
    source = _module(after="class G(F):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 4\n")
    result = flatten(
        source, path="m.py", select=__import__("inliner.engine", fromlist=["Selection"]).Selection(name="G")
    )
    assert set(result.flattened) == {"F", "G"}
    assert "class F(FlatClass):" in result.source and "class G(F):" in result.source


_CLASS_TIME = """
import torch

log = []


def deco(cls):
    log.append("deco")
    return cls


@deco
class F(torch.autograd.Function):
    log.append("body")
    k = len(log)

    @staticmethod
    def forward(ctx, x):
        return x * F.k

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


def test_a_kept_class_runs_its_class_time_code_once_in_order():
    """Class-level statements and decorators run when the class is defined, as before."""
    result = flatten(_CLASS_TIME, path="m.py")
    assert result.flattened == ("F",)
    original, rewritten = load_module(_CLASS_TIME, "order_original"), load_module(result.source, "order_rewritten")
    assert original.log == rewritten.log == ["body", "deco"]
    assert rewritten.F.k == 1
    x = torch.ones(2, requires_grad=True)
    assert torch.equal(rewritten.F.apply(x), original.F.apply(x))


# ----------------------------------------------------------------- the fuzzer's kept-class shapes

_KEPT_FEATURES = ("kept_classmethod_backward", "kept_symbolic", "kept_subclass", "kept_stored", "kept_decorator")


def test_the_generator_writes_every_kept_class_shape_and_they_flatten():
    """fuzz_gen.kept_class_shapes: each shape appears in a module whose classes all flatten,
    and the oracle finds original and rewrite alike there."""
    from tests.support.fuzz_gen import generate_from_seed
    from tests.support.fuzz_oracle import check_generated

    wanted = set(_KEPT_FEATURES)
    for seed in range(300):
        gen = generate_from_seed(seed)
        shown = wanted & gen.features
        if not shown:
            continue
        outcome = check_generated(gen, func=False)
        assert not outcome.failures, "\n".join(outcome.failures) + "\n" + gen.source
        if set(outcome.flattened) == set(gen.classes):
            wanted -= shown
        if not wanted:
            return
    pytest.fail(f"no flattened module with {sorted(wanted)} in 300 seeds")


def test_full_onnx_export_when_onnx_is_installed():
    """``torch.onnx.export`` itself (it needs the ``onnx`` package to write the model)."""
    import io

    onnx = pytest.importorskip("onnx")
    case = GOLDEN / "kept_class_symbolic"
    graphs = []
    for label in ("input", "output"):
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = load_module((case / f"{label}.py").read_text(), f"symbolic_export_{label}")
            torch.onnx.export(_mappings(module), (torch.randn(4),), buffer, dynamo=False)
        model = onnx.load_from_string(buffer.getvalue())
        onnx.checker.check_model(model)
        graphs.append([node.op_type for node in model.graph.node])
    assert graphs[0] == graphs[1] and "Identity" in graphs[1]
