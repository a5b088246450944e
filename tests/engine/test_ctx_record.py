"""The ctx record (inliner/engine/function_class/ctx_record.py, inliner/runtime/_record.py): what it flattens, what it refuses, how it behaves.

Behaviour side by side with the originals is the golden cases' job (golden/record_*);
here: the shapes the strategy must refuse (each with its code and position), the ones it
must accept, and properties of the runtime's ``Record`` a scenario cannot see (no
reference cycle, torch's error messages, names that collide).
"""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

from inliner import flatten
from inliner.runtime._record import Record, bind, replay
from tests.support.harness import load_module


def _function(forward: str, backward: str = "        return g * 3\n", prelude: str = "") -> str:
    return (
        "import torch\n\n\n"
        + prelude
        + "class F(torch.autograd.Function):\n"
        + "    @staticmethod\n    def forward(ctx, x):\n"
        + forward
        + "        return x * 2\n\n"
        + "    @staticmethod\n    def backward(ctx, g):\n"
        + backward
    )


REFUSED = {
    "torch-only attribute": (_function("        ctx.n = len(ctx.next_functions)\n"), "INL100", "next_functions"),
    "custom_fwd's attribute": (_function("        ctx.d = ctx._dtype\n"), "INL100", "_dtype"),
    "assigns saved_tensors": (_function("        ctx.saved_tensors = (x,)\n"), "INL101", "saved_tensors"),
    "backward assigns needs_input_grad": (
        _function("        ctx.k = 1\n", "        ctx.needs_input_grad = (True,)\n        return g\n"),
        "INL101",
        "needs_input_grad",
    ),
    "ctx rebound": (_function("        ctx.k = 1\n        ctx = None\n"), "INL100", "rebound"),
    "closure in forward": (_function("        ctx.f = lambda: ctx.k\n        ctx.k = 1\n"), "INL100", "captured"),
    "generator in forward": (
        _function("        ctx.k = 1\n        ctx.g = (ctx.k for _ in x)\n", "        ctx.k += 1\n        return g\n"),
        "INL100",
        "captured",
    ),
    "save in backward": (
        _function("        ctx.k = 1\n", "        ctx.save_for_backward(g)\n        return g\n"),
        "INL100",
        "only forward may call",
    ),
    "stored in a list": (_function("        SEEN.append(ctx)\n", prelude="SEEN = []\n\n\n"), "INL102", "SEEN.append"),
    "aliased": (_function("        c = ctx\n        c.k = 1\n"), "INL102", "stored elsewhere"),
    "computed setattr": (_function('        setattr(ctx, "k" + "", 1)\n'), "INL102", "cannot read statically"),
    "lambda helper": (
        _function("        keep(ctx, x)\n", prelude="keep = lambda c, t: c.save_for_backward(t)  # noqa: E731\n\n\n"),
        "INL102",
        "`keep`",
    ),
    "decorated helper": (
        _function(
            "        keep(ctx, x)\n",
            prelude="import functools\n\n\n@functools.lru_cache\ndef keep(c, t):\n    c.t = t\n\n\n",
        ),
        "INL102",
        "`keep`",
    ),
    "helper bound twice": (
        _function("        keep(ctx, x)\n", prelude="def keep(c, t):\n    c.t = t\n\n\nkeep = print\n\n\n"),
        "INL102",
        "`keep`",
    ),
    "imported helper": (
        _function("        keep(ctx, x)\n", prelude="from os.path import join as keep\n\n\n"),
        "INL102",
        "`keep`",
    ),
    "helper storing ctx": (
        _function("        keep(ctx, x)\n", prelude="SEEN = []\n\n\ndef keep(c, t):\n    SEEN.append(c)\n\n\n"),
        "INL102",
        "in `keep`",
    ),
    "ctx unpacked into a call": (_function("        print(*[ctx])\n"), "INL102", "stored elsewhere"),
    "getattr with a bytes name": (
        _function("        ctx.k = 1\n", '        return g * getattr(ctx, b"k", 1.0)\n'),
        "INL102",
        "cannot read statically",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_a_record_cannot_stand_in_for_is_refused(name):
    source, code, words = REFUSED[name]
    result = flatten(source, path="m.py")
    assert result.refused == ("F",) and result.source == source
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == code and words in diagnostic.message, diagnostic.format()


def test_a_helper_refusal_points_at_the_ctx_handed_over():
    source, _, _ = REFUSED["helper storing ctx"]
    (diagnostic,) = flatten(source, path="m.py").diagnostics
    line = source.splitlines()[diagnostic.line - 1]
    assert line[diagnostic.column - 1 :].startswith("ctx, x)")


# each backward also writes ctx, so that the record strategy is the one that runs
ACCEPTED = {
    "getattr, hasattr, setattr and delattr with constant names": _function(
        '        setattr(ctx, "k", 2.0)\n        ctx.h = hasattr(ctx, "k")\n        delattr(ctx, "h")\n',
        '        ctx.seen = True\n        return g * getattr(ctx, "k") * getattr(ctx, "missing", 1.0)\n',
    ),
    "helper handing ctx to another helper": _function(
        "        outer(ctx, x)\n",
        "        ctx.seen = True\n        (t,) = ctx.saved_tensors\n        return g * t * ctx.k\n",
        prelude="def inner(c, k):\n    c.k = k\n\n\ndef outer(c, t):\n    c.save_for_backward(t)\n    inner(c, k=3.0)\n\n\n",
    ),
    "for and with targets": _function(
        "        for ctx.last in (1.0, 2.0):\n            pass\n",
        "        ctx.seen = True\n        return g * ctx.last\n",
    ),
    "augmented and deleted in backward": _function(
        "        ctx.k = 1.0\n        ctx.tmp = 2.0\n",
        "        ctx.k += 1\n        del ctx.tmp\n        return g * ctx.k\n",
    ),
    "keyword named like ctx": _function(
        "        ctx.k = dict(ctx=1)['ctx']\n",
        "        ctx.seen = True\n        return g * ctx.k\n",
    ),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_shapes_the_record_accepts_run_like_the_original(name):
    source = ACCEPTED[name]
    result = flatten(source, path="m.py")
    assert result.flattened == ("F",), [d.format() for d in result.diagnostics]
    assert "ctx_record=True" in result.source
    x = torch.randn(3)
    grads = []
    for text in (source, result.source):
        module = load_module(text, "record_accept")
        leaf = x.clone().requires_grad_()
        y = module.F.apply(leaf) if text is source else module.F(leaf)
        grads.append(torch.autograd.grad(y.sum(), leaf)[0])
    assert torch.equal(grads[0], grads[1])


def test_the_record_name_is_aliased_when_the_module_has_one():
    source = "class Record:\n    pass\n\n\n" + _function(
        "        ctx.k = 1\n", "        ctx.k += 1\n        return g\n"
    )
    result = flatten(source, path="m.py")
    assert "from inliner.runtime import Record as _inliner_Record, custom_vjp\n" in result.source
    assert 'state = _inliner_Record("F")' in result.source
    load_module(result.source, "record_alias").F(torch.ones(2, requires_grad=True)).sum().backward()


# -- the runtime's Record ------------------------------------------------------------------


def test_record_errors_are_the_originals_word_for_word():
    captured = {}

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            record = Record("Probe")
            for label, action in (
                ("missing", lambda c: c.nothing),
                ("del missing", lambda c: delattr(c, "nothing")),
                ("materialize read", lambda c: c.materialize_grads),
                ("saved_tensors set", lambda c: setattr(c, "saved_tensors", ())),
            ):
                messages = []
                for obj in (ctx, record):
                    with pytest.raises(AttributeError) as caught:
                        action(obj)
                    messages.append(str(caught.value))
                captured[label] = messages
            captured["saved in forward"] = [ctx.saved_tensors, record.saved_tensors]
            ctx.save_for_forward(x)
            record.save_for_forward(x)
            captured["saved after save_for_forward"] = [len(ctx.saved_tensors), len(record.saved_tensors)]
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    Probe.apply(torch.ones(2, requires_grad=True))
    for label, (original, record) in captured.items():
        assert original == record, label


def test_a_record_keeps_no_graph_alive():
    """ctx holds the record's attributes and the record backward gets reaches ctx only
    weakly: dropping the output frees both."""
    source = _function(
        "        ctx.save_for_backward(x)\n        ctx.t = x * 3\n",
        "        ctx.calls = 1\n        (t,) = ctx.saved_tensors\n        return g * t * ctx.t\n",
    )
    module = load_module(flatten(source).source, "record_cycle")
    gc.collect()
    gc.disable()
    try:
        x = torch.randn(3, requires_grad=True)
        y = module.F(x)
        gone = weakref.ref(y.grad_fn.t)
        y.sum().backward(retain_graph=True)
        assert y.grad_fn.calls == 1
        del y
        assert gone() is None, "a reference cycle kept the record's attributes (and its graph) alive"
    finally:
        gc.enable()


def test_replay_hands_over_and_clears_like_autograd():
    class Carrier(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            record = Record("Carrier")
            record.save_for_backward(x)
            record.mark_non_differentiable()
            record.set_materialize_grads(False)
            replay(ctx, record)
            ctx.record = record
            return x * 2

        @staticmethod
        def backward(ctx, g):
            record = ctx.record
            bind(record, ctx)
            assert record.to_save is None and record.non_differentiable is None
            assert record.needs_input_grad == (True,)
            (x,) = record.saved_tensors
            return g * x

    x = torch.randn(3, requires_grad=True)
    y = Carrier.apply(x)
    (grad,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(grad, x.detach())


def test_repr_names_the_function_and_its_attributes():
    record = Record("Attention")
    record.scale = 0.5
    record.q = torch.ones(2, 3)
    assert repr(record) == "<Attention ctx record: scale=0.5, q=tensor(shape=(2, 3), dtype=torch.float32)>"
