"""Decorators on forward/backward: what the engine makes of each, and how the runtime replays it.

The golden cases ``decorator_*`` execute each shape side by side; here are the facts
they rest on: the kind recorded for each decorator (read by whoever decides how a flat
callable may be compiled), the pass-through proof, the refusals, and the runtime's
promise that a decorator is applied once, at the binding line, to a function with the
original's parameter names.
"""

from __future__ import annotations

import functools
import textwrap

import pytest
import torch

import inliner.engine.function_class.lower_class
from inliner import flatten
from inliner.runtime import custom_vjp
from tests.support.harness import load_module


@pytest.fixture
def lowered(monkeypatch):
    """The ``CustomVJP`` of every class the engine flattens, by class name."""
    seen = {}
    real = inliner.engine.function_class.lower_class.lower_function_class

    def capture(node, **kwargs):
        vjp = real(node, **kwargs)
        seen[node.name.value] = vjp
        return vjp

    monkeypatch.setattr(inliner.engine.function_class.lower_class, "lower_function_class", capture)
    return seen


def _function(forward_decorators: str = "", backward_decorators: str = "", name: str = "F") -> str:
    return textwrap.dedent(f"""
        class {name}(torch.autograd.Function):
            @staticmethod
            {forward_decorators}
            def forward(ctx, x):
                return x * 2

            @staticmethod
            {backward_decorators}
            def backward(ctx, g):
                return g * 3
        """)


def _kinds(source: str, lowered: dict, name: str = "F") -> list[tuple[str, str, str, bool]]:
    result = flatten(source)
    assert name in result.flattened, [d.format() for d in result.diagnostics]
    return [(u.member, u.kind, u.target, u.pass_through) for u in lowered[name].spec.decorators]


HEAD = "import functools\nimport torch\nfrom torch.autograd.function import once_differentiable\n"
DEFS = "def tag(name):\n    return lambda fn: fn\n\n\ndef make(value=None):\n    return value\n"


@pytest.mark.parametrize(
    "prelude,forward,backward,expected",
    [
        (
            "",
            "@torch.amp.custom_fwd(device_type='cpu')",
            "@once_differentiable",
            [
                ("forward", "known", "torch.amp.custom_fwd", False),
                ("backward", "known", "torch.autograd.function.once_differentiable", False),
            ],
        ),
        ("cf = torch.cuda.amp.custom_fwd\n", "@cf", "", [("forward", "alias", "torch.cuda.amp.custom_fwd", False)]),
        (
            "cf = functools.partial(torch.amp.custom_fwd, device_type='cuda')\n",
            "@cf(cast_inputs=torch.float32)",
            "",
            [("forward", "alias", "torch.amp.custom_fwd", False)],
        ),
        (
            "from torch.cuda.amp import custom_bwd as cb\n",
            "",
            "@cb",
            [("backward", "known", "torch.cuda.amp.custom_bwd", False)],
        ),
        (
            "",
            "@torch.no_grad()",
            "@torch.enable_grad()",
            [("forward", "context", "torch.no_grad", False), ("backward", "context", "torch.enable_grad", False)],
        ),
        ("", "@torch.autocast('cpu')", "", [("forward", "context", "torch.autocast", False)]),
        (
            "",
            "@torch.compile",
            "@torch.compile(backend='eager')",
            [("forward", "compile", "torch.compile", False), ("backward", "compile", "torch.compile", False)],
        ),
        ("", "@torch.compiler.disable", "", [("forward", "compile", "torch.compiler.disable", False)]),
        (
            "from kernels.utils import ensure_contiguous\n",
            "@ensure_contiguous",
            "",
            [("forward", "wrapper", "kernels.utils.ensure_contiguous", False)],
        ),
    ],
)
def test_each_decorator_is_recorded_with_its_kind(prelude, forward, backward, expected, lowered):
    assert _kinds(HEAD + prelude + _function(forward, backward), lowered) == expected


def test_an_alias_bound_in_each_branch_to_torch_s_decorator_is_an_alias(lowered):
    """megatron-core picks its ``custom_fwd`` by torch version: each binding is torch's."""
    prelude = (
        "if flag:\n    cf = functools.partial(torch.amp.custom_fwd, device_type='cuda')\n"
        "else:\n    cf = torch.cuda.amp.custom_fwd\n"
    )
    assert _kinds(HEAD + prelude + _function("@cf"), lowered) == [("forward", "alias", "torch.amp.custom_fwd", False)]


def test_an_alias_bound_twice_is_only_a_wrapper(lowered):
    """``custom_fwd`` rebound somewhere: it may not be torch's, so it is not called known."""
    prelude = "cf = torch.cuda.amp.custom_fwd\nif flag:\n    cf = functools.lru_cache\n"
    assert _kinds(HEAD + prelude + _function("@cf"), lowered) == [("forward", "wrapper", "<local>", False)]


PASS_THROUGH = '''
def keep(fn):
    """Returns the function itself."""
    return fn


def forwarding(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def contiguous_args(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        def contiguous(x):
            return x.contiguous() if isinstance(x, torch.Tensor) else x

        args = [contiguous(a) for a in args]
        return fn(ctx, *args)

    return wrapper


def factory(flag=True):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args)

        return wrapper

    return decorator


def logging(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        print("called")
        return fn(*args)

    return wrapper


def scales(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) * 2

    return wrapper


def literal_default(fn):
    @functools.wraps(fn)
    def wrapper(ctx, x, factor=1, *, note=None):
        return fn(ctx, x, factor, note=note)

    return wrapper


def computed_default(fn):
    @functools.wraps(fn)
    def wrapper(ctx, x, factor=keep(1)):
        return fn(ctx, x, factor)

    return wrapper


def uses_flag(flag):
    def decorator(fn):
        def wrapper(*args):
            args = args if flag else args
            return fn(*args)

        return wrapper

    return decorator
'''


@pytest.mark.parametrize(
    "decorator,proven",
    [
        ("@keep", True),
        ("@forwarding", True),
        ("@contiguous_args", True),
        ("@factory(flag=False)", True),
        ("@logging", False),  # a call with an effect
        ("@scales", False),  # changes the result
        ("@uses_flag(True)", False),  # reads its factory's argument
        ("@literal_default", True),  # a literal default is passed on as any argument
        ("@computed_default", False),  # a default that calls something
    ],
)
def test_pass_through_is_proven_only_for_wrappers_that_forward(decorator, proven, lowered):
    ((_, kind, _, through),) = _kinds(HEAD + PASS_THROUGH + _function(decorator), lowered)
    assert kind == "wrapper" and through is proven


SETUP_CONTEXT = """
class F(torch.autograd.Function):
    @staticmethod
    {decorator}
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""

ABOVE_STATICMETHOD = """
class F(torch.autograd.Function):
    @functools.lru_cache
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""

DEFAULT_AFTER_DECORATOR = """
class F(torch.autograd.Function):
    @staticmethod
    @tag(make())
    def forward(ctx, x, eps=make()):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None
"""


@pytest.mark.parametrize(
    "source,message",
    [
        (ABOVE_STATICMETHOD, "above @staticmethod"),
        (SETUP_CONTEXT.format(decorator="@torch.no_grad()"), "setup_context-style forward"),
        (SETUP_CONTEXT.format(decorator="@torch.amp.custom_fwd(device_type='cpu')"), "broken in torch itself"),
        (
            SETUP_CONTEXT.format(decorator="").replace("def setup_context", "@tag\n    def setup_context"),
            "`setup_context` is not replayed",
        ),
        (DEFAULT_AFTER_DECORATOR, "`make()` and the decorator arguments of `forward` in the other order"),
        (_function("@tag(forward)"), "a name of the class body"),
    ],
)
def test_refusals(source, message):
    result = flatten(HEAD + DEFS + source)
    assert not result.flattened, result.source
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "INL106" and message in diagnostic.message, diagnostic.message


def test_effects_in_class_order_are_kept(lowered):
    """Forward's decorator with effects, then backward's default with none, then backward's
    decorator with effects: the binding line evaluates them in that order too."""
    source = _function("@tag(make('f'))", "@tag(make('b'))").replace(
        "def backward(ctx, g):", "def backward(ctx, g, k=1):"
    )
    assert _kinds(HEAD + DEFS + source, lowered) == [
        ("forward", "wrapper", "<local>", False),
        ("backward", "wrapper", "<local>", False),
    ]


def test_a_default_evaluated_before_the_decorated_member_may_have_effects(lowered):
    """backward (first in the class) has a default with effects; forward's decorator comes
    after it in the class body, and after it on the binding line as well."""
    source = textwrap.dedent("""
        class F(torch.autograd.Function):
            @staticmethod
            def backward(ctx, g, k=make()):
                return g * 3, None

            @staticmethod
            @tag(make())
            def forward(ctx, x):
                return x * 2
        """)
    assert _kinds(HEAD + DEFS + source, lowered) == [("forward", "wrapper", "<local>", False)]


# -- the runtime ------------------------------------------------------------------------


def _fwd(x, scale=2.0):
    return x * scale, ()


def _bwd(residuals, g):
    return g * 3, None


def test_decorators_are_applied_once_at_the_binding_line():
    applied = []

    def deco(fn):
        applied.append(fn.__qualname__)
        return fn

    flat = custom_vjp(_fwd, _bwd, name="Scaled", forward_decorators=(deco,), backward_decorators=(deco,))
    assert applied == ["Scaled.forward", "Scaled.backward"]
    x = torch.randn(3, requires_grad=True)
    flat(x).sum().backward()
    torch.func.grad(lambda t: flat(t).sum())(x.detach())
    assert applied == ["Scaled.forward", "Scaled.backward"]  # carriers reuse them


def test_a_decorator_returning_the_function_keeps_forwards_parameter_names():
    """torch 2.13 binds apply's keywords by the outermost forward's code: the trampoline's."""

    def keep(fn):
        return fn

    flat = custom_vjp(_fwd, _bwd, name="Scaled", forward_decorators=(keep,))
    forward = flat.carriers().eager.forward
    assert forward.__code__.co_varnames[: forward.__code__.co_argcount] == ("ctx", "x", "scale")


def test_real_ctx_in_eager_stand_in_under_torch_func():
    seen = []

    def spy(fn):
        def wrapper(ctx, *args):
            seen.append(type(ctx).__name__)
            return fn(ctx, *args)

        return wrapper

    flat = custom_vjp(_fwd, _bwd, name="Scaled", forward_decorators=(spy,), backward_decorators=(spy,))
    x = torch.randn(3, requires_grad=True)
    flat(x).sum().backward()
    assert seen == ["ScaledBackward", "ScaledBackward"]
    seen.clear()
    torch.func.grad(lambda t: flat(t).sum())(x.detach())
    assert seen[0] == "_CtxStandIn" and len(seen) == 2


def test_a_setup_context_forward_takes_no_decorator():
    with pytest.raises(TypeError, match="takes no ctx"):
        custom_vjp(_fwd, _bwd, name="Scaled", fill_defaults=True, forward_decorators=(functools.wraps(_fwd),))


def test_input_casting_is_hoisted_only_from_the_outermost_decorator():
    cast = torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)

    def other(fn):
        return fn

    hoisted = custom_vjp(_fwd, _bwd, name="A", forward_decorators=(cast, other))
    kept = custom_vjp(_fwd, _bwd, name="B", forward_decorators=(other, cast))
    # the flat callable's own code, or the casting function in front of it
    assert hoisted.__code__ is not kept.__code__
    plain = custom_vjp(_fwd, _bwd, name="C", forward_decorators=(other,))
    assert kept.__code__ is plain.__code__


def test_each_load_of_a_golden_case_imports_its_helpers_afresh():
    """A decorator imported from a module next to the golden case: state is not shared."""
    from tests.support.golden import GOLDEN

    case = GOLDEN / "decorator_imported"
    first = load_module((case / "input.py").read_text(), "helpers_a", case)
    second = load_module((case / "input.py").read_text(), "helpers_b", case)
    assert first.RANGES is not second.RANGES


def test_under_torch_func_a_decorator_sees_the_inputs_apply_got():
    """Not forward's defaults filled in (found by the fuzzer: a wrapper taking ``*args`` only
    met a keyword-only default passed as a keyword)."""
    seen = []

    def positional_only(fn):
        def wrapper(*args):
            seen.append(len(args))
            return fn(*args)

        return wrapper

    def fwd(x, dims=(3,), *, bias_scale=1.0):
        return x * len(dims) * bias_scale, ()

    def bwd(residuals, g):
        return g * 3

    flat = custom_vjp(fwd, bwd, name="Op", forward_decorators=(positional_only,))
    x = torch.randn(3)
    eager = torch.autograd.grad(flat(x.requires_grad_()).sum(), x)[0]
    assert torch.equal(torch.func.grad(lambda t: flat(t).sum())(x.detach()), eager)
    assert seen == [2, 2]  # (ctx, x) both times


VJP_NAMED = """
import functools
import torch

SEEN = []


def named(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        SEEN.append(fn.__qualname__)
        return fn(*args)

    return wrapper


def make():
    class Square(torch.autograd.Function):
        @staticmethod
        @named
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @named
        def vjp(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x * 5

    return Square.apply
"""


def test_a_decorator_sees_the_originals_names():
    """``fn.__qualname__`` of what a decorator wraps: the method's, where the class stood."""
    result = flatten(VJP_NAMED)
    assert result.flattened == ("Square",) and 'backward_name="vjp"' in result.source
    seen = {}
    for label, text in (("original", VJP_NAMED), ("rewritten", result.source)):
        module = load_module(text, f"vjp_named_{label}")
        x = torch.randn(3, requires_grad=True)
        module.make()(x).sum().backward()
        seen[label] = module.SEEN
    assert seen["original"] == seen["rewritten"] == ["make.<locals>.Square.forward", "make.<locals>.Square.vjp"]


@pytest.mark.filterwarnings("ignore")
def test_a_counting_wrapper_counts_every_compiled_call():
    """A replayed wrapper that is not a proven pass-through makes the Function side_effecting:
    an eager island under torch.compile, so the wrapper runs on every call, as the original's."""
    import torch._dynamo

    from tests.support import tracer_cases as tc

    original, rewritten = tc.modules("decorator_counted")
    calls = {}
    for label, module, function in (
        ("original", original, original.Twice.apply),
        ("rewritten", rewritten, rewritten.Twice),
    ):
        torch._dynamo.reset()
        start = len(module.CALLS)
        compiled = torch.compile(lambda x: function(x) * 1, backend="aot_eager")  # noqa: B023 (called in this iteration)
        for _ in range(3):
            compiled(torch.randn(3, requires_grad=True)).sum().backward()
        calls[label] = module.CALLS[start:]
    torch._dynamo.reset()
    assert calls["original"] == ["forward", "backward"] * 3
    assert calls["rewritten"] == calls["original"]


def test_a_star_import_may_rebind_staticmethod_unless_it_is_typing():
    """``from typing import *`` never binds a builtin's name; any other star import may."""
    body = (
        "\n\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    )
    typing_star = flatten("from typing import *\nimport torch\n" + body, path="m.py")
    assert typing_star.flattened == ("F",)
    other_star = flatten("from mylib import *\nimport torch\n" + body, path="m.py")
    assert other_star.refused == ("F",) and other_star.diagnostics[0].code == "INL105"
    # the refusal says why, rather than calling the member non-static
    assert "`forward`'s @staticmethod may not be the builtin" in other_star.diagnostics[0].message


def test_a_staticmethod_rebound_by_assignment_says_so():
    """As after a star import: ``@staticmethod`` is not known to be the builtin."""
    result = flatten(HEAD + "staticmethod = functools.partial(staticmethod)\n" + _function())
    assert not result.flattened, result.source
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "INL105", diagnostic.message
    assert "`forward`'s @staticmethod may not be the builtin" in diagnostic.message, diagnostic.message


def _without_staticmethod(member: str) -> str:
    """A Function whose ``member`` has no decorator at all."""
    lines = _function().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"def {member}("))
    kept = [line for i, line in enumerate(lines) if not (at - 2 <= i < at and line.strip() in ("@staticmethod", ""))]
    return "\n".join(kept) + "\n"


def test_a_backward_missing_staticmethod_next_to_a_static_forward_is_flattened():
    source = HEAD + _without_staticmethod("backward")
    assert source.count("@staticmethod") == 1, source
    assert flatten(source).flattened == ("F",)


def test_a_forward_missing_staticmethod_is_a_legacy_function():
    source = HEAD + _without_staticmethod("forward")
    assert source.count("@staticmethod") == 1, source
    (diagnostic,) = flatten(source).diagnostics
    assert diagnostic.code == "INL105" and "`forward` is not a @staticmethod" in diagnostic.message
