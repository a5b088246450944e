"""The compile-kind classifier (inliner/compile_kind.py): each kind, each reason, the conservative default.

Each case is a module holding one Function ``F`` (or an op call); the engine flattens
it and the test reads the kind the engine decided (``FlattenResult.compile_kinds``)
and checks that the emitted ``custom_vjp`` call carries exactly that.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from inliner import flatten
from tests.support.paths import ROOT

HEAD = """\
import logging
import warnings

import numpy as np
import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)
LOG = []


class State:
    count = 0


STATE = State()
"""


def function(forward: str, backward: str = "return g * 2", params: str = "x", extra: str = "") -> str:
    return (
        HEAD
        + textwrap.dedent(extra)
        + f"""

class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, {params}):
{textwrap.indent(textwrap.dedent(forward).strip(), " " * 8)}

    @staticmethod
    def backward(ctx, g):
{textwrap.indent(textwrap.dedent(backward).strip(), " " * 8)}
"""
    )


def emitted(source: str, name: str = "Fn") -> dict[str, str]:
    """The compile keywords of the ``custom_vjp(..., name=name)`` call in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "custom_vjp":
            keywords = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            if keywords.get("name") == name:
                return {k: v for k, v in keywords.items() if k in _KIND_KEYWORDS}
    raise AssertionError(f"no custom_vjp call for {name}")


def decide(source: str, name: str = "Fn", **options):
    result = flatten(source, path="case.py", **options)
    problems = [d.format() for d in result.diagnostics if d.code not in ("INL001", "INL300")]
    assert not problems, problems
    kinds = dict(result.compile_kinds)
    assert name in kinds, result.flattened
    kind = kinds[name]
    keywords = emitted(result.source, name)
    if kind.traceable:
        assert keywords == {}, "a traceable Function emits nothing new"
    else:
        assert keywords == _expected_keywords(kind)
    return kind


_KIND_KEYWORDS = ("compile_kind", "compile_reason", "backward_kind", "backward_reason")


def _expected_keywords(kind) -> dict[str, str]:
    """The forward's kind as ``compile_kind``, the backward's apart where it differs (not
    after a side-effecting forward, which keeps the call eager whatever the backward is);
    the worst of the two is what reports show."""
    forward, backward = kind.part("forward"), kind.part("backward")
    worst = max((forward, backward), key=lambda k: ["traceable", "opaque", "side_effecting"].index(k.kind))
    assert (kind.kind, kind.reason) == (worst.kind, worst.reason) or forward.kind == backward.kind
    keywords = {}
    if forward.kind != "traceable":
        keywords.update(compile_kind=forward.kind, compile_reason=forward.reason)
    if (forward.kind != "side_effecting" or forward.argument_writes) and backward.kind != forward.kind:
        keywords["backward_kind"] = backward.kind
        if backward.kind != "traceable":
            keywords["backward_reason"] = backward.reason
    return keywords


TRACEABLE_BODIES = {
    "torch functions and tensor methods": ("y = torch.tanh(x) * x.sin()\nreturn y.clamp(-1, 1)",),
    "an alias module": ("return F.relu(x) + F.gelu(x)",),
    "pure builtins and math": (
        "import math\nn = len(x.shape) + max(1, x.dim())\nreturn x * math.sqrt(float(x.size(-1))) * n",
    ),
    "a branch on metadata": ("if x.dim() == 2 and x.requires_grad:\n    return x * 2\nreturn x * 3",),
    "a list the body builds": (
        "outs = []\nfor i in range(3):\n    outs.append(x * i)\nreturn torch.stack(outs).sum(0)",
    ),
    "a dict the body builds": ("d = {}\nd['a'] = x * 2\nreturn d['a']",),
    # its elements existed before (detached inputs), the list did not (liger-kernel's saves)
    "appending to a list of outside tensors the body built on each branch": (
        "if x.dim() > 1:\n    saved = [x.detach(), w]\nelse:\n    saved = list((w,))\n"
        "saved.append(w.detach())\nreturn x * w + len(saved)",
        "return g, g",
        "x, w",
    ),
    "an item write into a list of outside tensors it made": (
        "state = [x, x.clone()]\nstate[1] = state[0] * 2\nreturn state[1]",
    ),
    "an item write into a tensor it made": ("y = x.clone()\ny[0] = 1.0\nreturn y",),
    "an in-place op on a dirty input": ("ctx.mark_dirty(x)\nx.add_(1)\nx[0] = 2.0\nreturn x",),
    "an in-place write on the incoming gradient": ("return x * 2", "g[g < 0] = 0\nreturn g"),
    "a same-file helper that is pure torch": (
        "return helper(x)",
        "return g * 2",
        "x",
        "\ndef helper(t):\n    return torch.tanh(t) * 2\n",
    ),
    "attribute reads of an argument": ("return x * cfg.scale + cfg.bias", "return g, None", "x, cfg"),
    "aten ops of a dumped graph": ("return torch.ops.aten.sin.default(x)",),
    "no_grad and a lambda": ("with torch.no_grad():\n    f = lambda t: t * 2\n    y = f(x)\nreturn y * x",),
    "raising an error": ("if x.dim() != 1:\n    raise ValueError('1-d only')\nreturn x * 2",),
    "a ctx attribute that is a float": ("ctx.k = 2.0\nreturn x * 2", "return g * ctx.k"),
    # the write sees only the rebinding (``reaching.py``): TransformerEngine's _ViewFunc
    "an item write into an argument rebound to a list it made": (
        "if -1 in shape:\n    shape = list(shape)\n    for i, d in enumerate(shape):\n"
        "        if d == -1:\n            shape[i] = 1\nreturn x.reshape(shape)",
        "return g.reshape(x_shape), None",
        "x, shape",
        "\nx_shape = (2, 3)\n",
    ),
    "an item write into a tensor argument rebound to its clone": ("x = x.clone()\nx[0] += 1.0\nreturn x",),
    "a shape list written, then rebound to a size": (
        "shape = list(x.shape)\nshape[0] = 1\nshape = torch.Size(shape)\nreturn x.new_zeros(shape) + x[:1]",
    ),
    "a choice of tuples extended on a branch": (
        "outs = (x,) if w is None else (x, w)\nif w is None:\n    outs += (x * 3,)\nreturn outs[0] * len(outs)",
        "return g, None",
        "x, w",
    ),
    "a tuple of arguments extended on a branch": (
        "saved = (x, w)\nif x.dim() > 1:\n    saved += (w,)\nreturn x * len(saved)",
        "return g, g",
        "x, w",
    ),
}


@pytest.mark.parametrize("body", TRACEABLE_BODIES.values(), ids=TRACEABLE_BODIES.keys())
def test_traceable(body):
    assert decide(function(*body)).kind == "traceable"


SIDE_EFFECTING = {
    "append to a module-level list": (("LOG.append('f')\nreturn x * 2",), "forward appends to module-level LOG"),
    "a counter on a state object": (
        ("return x * 2", "STATE.count += 1\nreturn g"),
        "backward updates module-level STATE.count",
    ),
    "a global counted up": (("global COUNT\nCOUNT = COUNT + 1\nreturn x * 2",), "forward assigns module-level COUNT"),
    "a global set in backward": (
        ("return x * 2", "global COUNT\nCOUNT = 1\nreturn g"),
        "backward assigns module-level COUNT",
    ),
    "print in backward": (("return x * 2", "print('backward')\nreturn g"), "backward calls print"),
    "logging in backward": (
        ("return x * 2", "logger.info('b')\nreturn g"),
        "backward calls logger.info, a method of module-level logger",
    ),
    "warnings in backward": (("return x * 2", "warnings.warn('b')\nreturn g"), "backward calls warnings.warn"),
    "a file": (("open('log.txt', 'a').write('f')\nreturn x * 2",), "forward calls open"),
    "NVTX ranges": (
        ("torch.cuda.nvtx.range_push('f')\ny = x * 2\ntorch.cuda.nvtx.range_pop()\nreturn y",),
        "forward calls torch.cuda.nvtx.range_push",
    ),
    "RNG seeding": (("return x * 2", "torch.manual_seed(0)\nreturn g"), "backward calls torch.manual_seed"),
    "a collective in backward": (
        ("return x * 2", "torch.distributed.all_reduce(g)\nreturn g"),
        "backward calls torch.distributed.all_reduce",
    ),
    "a point-to-point send": (("torch.distributed.send(x, 1)\nreturn x * 2",), "forward calls torch.distributed.send"),
    "an object collective (dynamo crashes on the original's)": (
        ("objs = [None]\ntorch.distributed.all_gather_object(objs, 1)\nreturn x * 2",),
        "forward calls torch.distributed.all_gather_object",
    ),
    "torch.seed (dynamo runs it once)": (("torch.seed()\nreturn x * 2",), "forward calls torch.seed"),
    "record_function (dynamo drops it)": (
        ("with torch.profiler.record_function('f'):\n    return x * 2",),
        "forward calls torch.profiler.record_function",
    ),
    "a helper that prints, called from a backward": (
        ("return x * 2", "return helper(g)", "x", "\ndef helper(t):\n    print(t)\n    return t * 2\n"),
        "backward calls helper, which calls print",
    ),
    "a helper a forward calls that writes outside state": (
        ("return helper(x, acc)", "return g, None", "x, acc", "\ndef helper(t, a):\n    a.append(t)\n    return t\n"),
        "forward calls helper, which appends to argument a",
    ),
    "a hook on an input": (("x.register_hook(lambda t: t)\nreturn x * 2",), "forward calls x.register_hook()"),
    "a callable stored on ctx": (
        ("ctx.fn = fn\nreturn x * 2", "fn = ctx.fn\nreturn fn(g), None", "x, fn"),
        "backward calls fn, stored on ctx",
    ),
    "a method of an argument in backward": (
        ("ctx.layer = layer\nreturn x * 2", "layer = ctx.layer\nlayer.step()\nreturn g, None", "x, layer"),
        "backward calls layer.step, a method of layer (stored on ctx)",
    ),
    "a counter through a module-level object's attribute": (
        ("obj = STATE\nobj.calls += 1\nreturn x * 2",),
        "forward updates obj.calls",
    ),
    "a counter through an argument's item keyed by itself": (
        ("obj[len(obj)] = 1\nobj[len(obj) - 1] += 1\nreturn x * 2", "return g, None", "x, obj"),
        "forward writes an item of argument obj",
    ),
    "a counter through an argument rebound": (
        ("obj = obj or STATE\nobj.calls += 1\nreturn x * 2", "return g, None", "x, obj"),
        "forward updates argument obj.calls",
    ),
    "append to a list argument": (
        ("acc.append(x)\nreturn x * 2", "return g, None", "x, acc"),
        "forward appends to argument acc",
    ),
    "append to a list that may be an argument": (
        ("saved = [x]\nif x.dim() > 1:\n    saved = acc\nsaved.append(x)\nreturn x * 2", "return g, None", "x, acc"),
        "forward appends to saved",
    ),
    "extend a list argument": (
        ("acc += [x]\nreturn x * 2", "return g, None", "x, acc"),
        "forward extends argument acc",
    ),
    "an item of a module-level dict updated": (
        ("cfg = CFG\ncfg['calls'] += 1\nreturn x * 2", "return g", "x", "\nCFG = {'calls': 0}\n"),
        "forward writes an item of cfg",
    ),
    "an item set from what it writes": (
        ("cfg[len(cfg)] = 1\nreturn x * 2", "return g, None", "x, cfg"),
        "forward writes an item of argument cfg",
    ),
    "an attribute set through a method of its object": (
        ("STATE.count = STATE.next_count()\nreturn x * 2",),
        "forward sets module-level STATE.count",
    ),
    "an attribute set from the object holding it": (
        ("STATE.count = bump(STATE)\nreturn x * 2", "return g", "x", "\ndef bump(s):\n    return 1\n"),
        "forward sets module-level STATE.count",
    ),
    # not a counter of calls, or not on what the caller passed
    "an argument's attribute accumulated": (
        ("obj.total = obj.total + x.sum()\nreturn x * 2", "return g, None", "x, obj"),
        "forward sets argument obj.total",
    ),
    "an argument's list attribute extended": (
        ("obj.log += [x]\nreturn x * 2", "return g, None", "x, obj"),
        "forward updates argument obj.log",
    ),
    "a counter on a parameter's default": (
        ("obj.calls += 1\nreturn x * 2", "return g, None", "x, obj=STATE"),
        "forward updates argument obj.calls",
    ),
    # a read of what it writes through a local
    "an attribute set from a local read of itself": (
        ("n = STATE.count\nSTATE.count = n + 1\nreturn x * 2",),
        "forward sets module-level STATE.count",
    ),
    "an item keyed by a local read of its dict": (
        ("n = len(CACHE)\nCACHE[n] = x\nreturn x * 2", "return g", "x", "\nCACHE = {}\n"),
        "forward writes an item of module-level CACHE",
    ),
    "an attribute set from itself through a local alias of its object": (
        ("obj = STATE\nobj.count = STATE.count + 1\nreturn x * 2",),
        "forward sets obj.count",
    ),
    "an attribute set from a name a later iteration rebinds to it": (
        (
            "for _ in range(2):\n    state.CB = w * 2\n    w = state.CB\nreturn x * w",
            "return g, None, None",
            "x, w, state",
        ),
        "forward sets argument state.CB",
    ),
    "an attribute set from itself": (
        ("STATE.count = STATE.count + 1\nreturn x * 2",),
        "forward sets module-level STATE.count",
    ),
    "an argument's attribute deleted": (
        ("del obj.cache\nreturn x * 2", "return g, None", "x, obj"),
        "forward deletes argument obj.cache",
    ),
    "a tensor's data set": (
        ("w.data = x.detach()\nreturn x * w", "return g, g", "x, w"),
        "forward sets argument w.data",
    ),
    "an attribute of an argument": (("x.data = x.data * 2\nreturn x * 1",), "forward sets argument x.data"),
    "a helper with a side effect": (
        ("return helper(x)", "return g", "x", "\ndef helper(t):\n    LOG.append(t)\n    return t * 2\n"),
        "forward calls helper, which appends to module-level LOG",
    ),
    "a result thrown away": (("acc.add(x)\nreturn x * 2", "return g, None", "x, acc"), "forward adds to argument acc"),
    # where flow cannot show that only a rebinding reaches the write (``reaching.py``)
    "a write before the argument is rebound": (
        ("shape[0] += 1\nshape = list(shape)\nreturn x * 2", "return g, None", "x, shape"),
        "forward writes an item of argument shape",
    ),
    "a write after a rebinding on one branch": (
        ("if x.dim() > 1:\n    shape = list(shape)\nshape[0] += 1\nreturn x * 2", "return g, None", "x, shape"),
        "forward writes an item of argument shape",
    ),
    "a write in a loop that rebinds later in its body": (
        ("for i in range(2):\n    shape[0] += i\n    shape = list(shape)\nreturn x * 2", "return g, None", "x, shape"),
        "forward writes an item of argument shape",
    ),
    "a write after a try that may not have rebound": (
        (
            "try:\n    shape = list(shape)\nexcept TypeError:\n    pass\nshape[0] += 1\nreturn x * 2",
            "return g, None",
            "x, shape",
        ),
        "forward writes an item of argument shape",
    ),
    "a write after a closure may have rebound it": (
        (
            "shape = list(shape)\ndef reset():\n    nonlocal shape\n    shape = acc\nreset()\nshape[0] += 1\n"
            "return x * 2",
            "return g, None, None",
            "x, shape, acc",
        ),
        "forward writes an item of argument shape",
    ),
    "a write after a walrus rebinds it": (
        (
            "shape = list(shape)\nif (shape := acc) is not None:\n    pass\nshape[0] += 1\nreturn x * 2",
            "return g, None, None",
            "x, shape, acc",
        ),
        "forward writes an item of argument shape",
    ),
    "a write after a match may have rebound it": (
        (
            "shape = list(shape)\nmatch x.dim():\n    case 1:\n        shape = acc\nshape[0] += 1\nreturn x * 2",
            "return g, None, None",
            "x, shape, acc",
        ),
        "forward writes an item of argument shape",
    ),
    "an append inside a match case that rebinds the list": (
        ("s = []\nmatch x.dim():\n    case 1:\n        s = LOG\n        s.append(x.sum())\nreturn x * 2",),
        "forward appends to s",
    ),
    "an append in a with item after an item rebinds the list": (
        (
            "import contextlib\ns = []\nwith contextlib.nullcontext(LOG) as s, contextlib.nullcontext(s.append(x)):\n"
            "    pass\nreturn x * 2",
        ),
        "forward appends to s",
    ),
    "an item of a tuple's element extended": (
        ("t = (acc,)\nt[0] += [x]\nreturn x * 2", "return g, None", "x, acc"),
        "forward writes an item of t",
    ),
    "a list argument extended after a tuple rebinding on one branch": (
        ("if x.dim() > 1:\n    acc = (x,)\nacc += [x]\nreturn x * 2", "return g, None", "x, acc"),
        "forward extends argument acc",
    ),
    "side effects win over opacity": (
        ("y = np.sin(x.numpy())\nLOG.append(1)\nreturn x * 2",),
        "forward appends to module-level LOG",
    ),
}


@pytest.mark.parametrize("body,reason", SIDE_EFFECTING.values(), ids=SIDE_EFFECTING.keys())
def test_side_effecting(body, reason):
    kind = decide(function(*body))
    assert (kind.kind, kind.reason) == ("side_effecting", reason)


OPAQUE = {
    # a forward's: dynamo traces it as it traced the original's (the split path)
    "print": (("print('forward')\nreturn x * 2",), "forward calls print"),
    "an environment variable read in forward": (
        ("import os\nif os.environ.get('FLAG', '0') == '1':\n    return x * 3\nreturn x * 2",),
        "forward calls os.environ.get",
    ),
    # a counter on what the caller passed: dynamo makes it dynamic after one recompile
    "a counter through an argument's attribute": (
        ("obj.calls += 1\nreturn x * 2", "return g, None", "x, obj"),
        "forward updates argument obj.calls",
    ),
    "a counter through an argument's item": (
        ("obj['calls'] += 1\nreturn x * 2", "return g, None", "x, obj"),
        "forward writes an item of argument obj",
    ),
    # a forward's plain set: traced and replayed as the original's, nothing guarded changes
    "an attribute set on an argument": (
        ("state.last = x.detach()\nreturn x * 2", "return g, None", "x, state"),
        "forward sets argument state.last",
    ),
    "a global set": (("global COUNT\nCOUNT = 1\nreturn x * 2",), "forward assigns module-level COUNT"),
    # bitsandbytes' MatMul8bitFp: a name the value reads is rebound to the target only later
    "an attribute set from a name rebound to it afterwards": (
        ("state.CB = w * 2\nw = state.CB\nreturn x * w", "return g, None, None", "x, w, state"),
        "forward sets argument state.CB",
    ),
    # a name the value reads is bound from outside (with ... as) only later
    "an attribute set from a name a later with rebinds": (
        (
            "import contextlib\nstate.last = w * 2\nwith contextlib.nullcontext(state) as w:\n    pass\nreturn x * 2",
            "return g, None, None",
            "x, w, state",
        ),
        "forward sets argument state.last",
    ),
    # linear-operator's InvQuadLogdet: a method of another attribute of the same module
    "an attribute set beside a call of another attribute's method": (
        ("STATE.last = x.detach() * STATE.other.value()\nreturn x * 2",),
        "forward sets module-level STATE.last",
    ),
    # bitsandbytes' MatMul8bitLt: the argument rebound to itself or a default
    "an attribute set on an argument or its default": (
        ("state = state or STATE\nstate.last = x.detach()\nreturn x * 2", "return g, None", "x, state"),
        "forward sets argument state.last",
    ),
    # liger-kernel's kernel caches: the value the write sees is the one just made
    "a module-level cache filled from a local": (
        (
            "k = CACHE.get(x.shape[-1])\nif k is None:\n    k = float(x.shape[-1])\n    CACHE[x.shape[-1]] = k\n"
            "return x * 2",
            "return g",
            "x",
            "\nCACHE = {}\n",
        ),
        "forward reads module-level CACHE, which the module changes at run time",
    ),
    # torchao's MXFP8OnDeviceAllToAllV: a buffer allocated from another attribute of its class
    "an attribute set from another attribute of its object": (
        (
            "if STATE.buf is None:\n    STATE.buf = torch.zeros(STATE.rows)\nreturn x * 2",
            "return g",
            "x",
            "\nSTATE.buf = None\nSTATE.rows = 3\n",
        ),
        "forward reads module-level STATE, which the module changes at run time",
    ),
    "a module-level cache a helper fills": (
        (
            "return x * scale_for(x)",
            "return g",
            "x",
            "\nCACHE = {}\n\ndef scale_for(t):\n"
            "    key = (t.dtype, t.shape[-1])\n    if key not in CACHE:\n        CACHE[key] = 2.0\n    return CACHE[key]\n",
        ),
        "forward calls scale_for, which reads module-level CACHE, which the module changes at run time",
    ),
    "an attribute set on a closure's object": (
        ("holder.flag = True\nreturn x * 2", "return g", "x", "\nholder = State()\n"),
        "forward sets module-level holder.flag",
    ),
    # a backward's raise: traced, it would raise while the forward compiles
    "a backward that raises": (
        ("return x * 2", "if g.dim() > 1:\n    raise NotImplementedError('1-d only')\nreturn g * 3"),
        "backward raises NotImplementedError('1-d only')",
    ),
    "logging": (("logger.info('f')\nreturn x * 2",), "forward calls logger.info, a method of module-level logger"),
    "a logging function": (("logging.warning('f')\nreturn x * 2",), "forward calls logging.warning"),
    "warnings": (("warnings.warn('f')\nreturn x * 2",), "forward calls warnings.warn"),
    "a collective": (("torch.distributed.all_reduce(x)\nreturn x * 2",), "forward calls torch.distributed.all_reduce"),
    "a collective on a group argument": (
        ("y = x * 2\ntorch.distributed.all_reduce(y, group=group)\nreturn y", "return g, None", "x, group"),
        "forward calls torch.distributed.all_reduce",
    ),
    "a collective dynamo breaks at, as for the original": (
        ("torch.distributed.barrier()\nreturn x * 2",),
        "forward calls torch.distributed.barrier",
    ),
    "RNG seeding": (("torch.manual_seed(0)\nreturn x * torch.rand_like(x)",), "forward calls torch.manual_seed"),
    "a method of an argument": (
        ("return layer.forward(x)", "return g, None", "x, layer"),
        "forward calls layer.forward, a method of argument layer",
    ),
    "a helper that prints": (
        ("return helper(x)", "return g", "x", "\ndef helper(t):\n    print(t)\n    return t * 2\n"),
        "forward calls helper, which calls print",
    ),
    "a helper calling a collective on a group argument": (
        (
            "return helper(x * 2, group)",
            "return g, None",
            "x, group",
            "\ndef helper(t, group):\n    torch.distributed.all_reduce(t, group=group)\n    return t\n",
        ),
        "forward calls helper, which calls torch.distributed.all_reduce",
    ),
    "a method of an argument, its result unused": (
        ("layer.bump()\nreturn x * 2", "return g, None", "x, layer"),
        "forward calls layer.bump, a method of argument layer",
    ),
    "a callable argument": (("return fn(x)", "return g, None", "x, fn"), "forward calls fn, passed in as an argument"),
    "numpy": (("return torch.from_numpy(np.sin(x.numpy()))",), "forward calls torch.from_numpy"),
    "numpy alone": (("return x * np.sum(np.ones(3))",), "forward calls numpy.sum"),
    "tolist": (("return x * len(x.tolist())",), "forward calls x.tolist()"),
    "item": (("return x * x.sum().item()",), "forward calls x.sum().item()"),
    "a kernel launch": (
        ("return kernel[(1,)](x)", "return g", "x", "\nkernel = None\n"),
        "forward launches kernel kernel[1,]",
    ),
    "an extension module": (
        ("return ext.forward(x)", "return g", "x", "\nimport fused_ext as ext\n"),
        "forward calls fused_ext.forward",
    ),
    "an imported project function": (
        ("return fused(x)", "return g", "x", "\nfrom mypkg.ops import fused\n"),
        "forward calls mypkg.ops.fused",
    ),
    "a branch on tensor data": (
        ("if (x > 0).all():\n    return x * 2\nreturn x",),
        "forward branches on a tensor's value ((x > 0).all())",
    ),
    "a tensor turned into a number": (
        ("return x * float(x.sum())",),
        "forward turns a tensor into a Python number (float(x.sum()))",
    ),
    "a boolean mask": (
        ("return x[x > 0].sum() * x",),
        "forward indexes with a boolean mask (x[x > 0]), an output shape that depends on data",
    ),
    "nonzero": (("return x * torch.nonzero(x).numel()",), "forward calls torch.nonzero"),
    "one-argument where": (
        ("return torch.where(x > 0)[0].float()",),
        "forward calls torch.where with one argument, an output shape that depends on data",
    ),
    "a custom operator": (("return torch.ops.mylib.scale(x)",), "forward calls torch.ops.mylib.scale"),
    "a module-level object": (("return act(x)", "return g", "x", "\nact = torch.nn.Tanh()\n"), "forward calls act"),
    "another Function": (
        (
            "return Other.apply(x)",
            "return g",
            "x",
            "\nclass Other(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n",
        ),
        "forward calls Other.apply",
    ),
    "a helper that reads data": (
        ("return x / peak(x)", "return g", "x", "\ndef peak(t):\n    return max(t.tolist())\n"),
        "forward calls peak, which calls t.tolist()",
    ),
    "a decorated helper": (
        (
            "return helper(x)",
            "return g",
            "x",
            "\nimport functools\n\n@functools.lru_cache\ndef helper(t):\n    return t * 2\n",
        ),
        "forward calls helper, which has the decorator @functools.lru_cache",
    ),
    "a global the module changes": (
        ("return x * SCALE", "return g", "x", "\nSCALE = 1.0\n\ndef set_scale(v):\n    global SCALE\n    SCALE = v\n"),
        "forward reads module-level SCALE, which the module changes at run time",
    ),
    "an unknown builtin": (("return x * eval('2')",), "forward calls eval"),
}


@pytest.mark.parametrize("body,reason", OPAQUE.values(), ids=OPAQUE.keys())
def test_opaque(body, reason):
    kind = decide(function(*body))
    assert (kind.kind, kind.reason) == ("opaque", reason)


def test_the_reason_names_the_first_offence_of_the_worst_kind():
    body = ("y = np.sin(x.numpy())\nz = x.tolist()\nreturn x * 2", "LOG.append(1)\nSTATE.count += 1\nreturn g")
    kind = decide(function(*body))
    assert (kind.kind, kind.reason) == ("side_effecting", "backward appends to module-level LOG")


def test_a_nested_function_writing_its_enclosing_function():
    source = HEAD + textwrap.dedent(
        """
        def make():
            calls = 0

            class Fn(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    nonlocal calls
                    calls += 1
                    return x * 2

                @staticmethod
                def backward(ctx, g):
                    return g

            return Fn.apply
        """
    )
    kind = decide(source)
    assert (kind.kind, kind.reason) == ("side_effecting", "forward assigns calls of the enclosing function")


def test_a_closure_inside_the_body_may_write_the_body_s_own_locals():
    body = ("total = 0\ndef bump():\n    nonlocal total\n    total += 1\nbump()\nreturn x * total",)
    assert decide(function(*body)).kind == "traceable"


def test_jvp_bodies_are_classified():
    source = HEAD + textwrap.dedent(
        """
        class Fn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3

            @staticmethod
            def jvp(ctx, t):
                LOG.append("jvp")
                return t * 2
        """
    )
    kind = decide(source)
    assert (kind.kind, kind.reason) == ("side_effecting", "jvp appends to module-level LOG")


def test_op_call_bodies_that_leave_torch_are_left_alone():
    """An op body calling numpy is not straight-line torch code: the call stays the op
    (INL202), so nothing is classified, and eager and compiled behaviour stay the original's."""
    source = HEAD + textwrap.dedent(
        """
        def scale_fwd(ctx, x):
            return torch.from_numpy(np.sin(x.numpy())), [x]


        def scale_bwd(ctx, g, x):
            return g * x.cos()


        def scaled(x):
            return torch.ops.higher_order.autograd_function_apply(
                scale_fwd, scale_bwd, x, args_tensor_mask=[True], non_differentiable_idx=[]
            )
        """
    )
    result = flatten(source, path="case.py")
    assert [d.code for d in result.diagnostics] == ["INL202"] and not result.compile_kinds


def test_a_dumped_graph_is_traceable():
    source = (ROOT / "golden" / "hop_two_calls" / "input.py").read_text()
    result = flatten(source, path="dump.py")
    assert result.compile_kinds and all(kind.traceable for _, kind in result.compile_kinds)


def test_unknown_names_are_not_traceable():
    """What the source cannot pin down (a name bound nowhere in the file) is never traceable."""
    kind = decide(function("return scale(x)"))
    assert (kind.kind, kind.reason) == ("opaque", "forward calls scale")


# Cases with Functions that are not traceable on purpose: the compile cases themselves, ctx
# records whose backward writes the record or calls what it holds, kept classes whose bodies
# call the class's own helpers, replayed wrappers and compiled bodies, a backward that logs,
# a forward that calls the step function it is handed (torchdiffeq's pattern), a backward that
# counts its calls on the node, forwards that read their tensors' values.
NOT_TRACEABLE_BY_DESIGN = ("compile_", "record_", "decorator_", "kept_class_")
NOT_TRACEABLE_CASES = {
    "ctx_read_in_own_assignment",
    "node_attributes",
    "node_attributes_record",
    "refuse_used_as_class",
    "saved_read_after_side_effect",
    "data_dependent_forward",
    "non_black_style",  # its forward writes items of a list it made (the issue's own lines), counted a side effect
}


def test_every_existing_golden_case_is_traceable():
    """A pure-torch Function emits nothing new: the golden outputs of before stay byte-identical."""
    from tests.support.golden import case_dirs

    for case in case_dirs():
        if case.name.startswith(NOT_TRACEABLE_BY_DESIGN) or case.name in NOT_TRACEABLE_CASES:
            continue
        result = flatten((case / "input.py").read_text(), path="input.py")
        assert all(kind.traceable for _, kind in result.compile_kinds), case.name
        assert "compile_kind" not in (case / "output.py").read_text(), case.name


def test_a_reason_with_quotes_is_emitted_as_a_valid_string():
    body = ('print("say \\"hi\\"")\nreturn x * 2',)
    source = function(*body)
    result = flatten(source, path="case.py")
    assert emitted(result.source)["compile_reason"] == "forward calls print"
    body = ('return x * kernels["a\\\\b"][(1,)](x)', "return g", "x", "\nkernels = {}\n")
    result = flatten(function(*body), path="case.py")
    reason = emitted(result.source)["compile_reason"]
    assert reason == dict(result.compile_kinds)["Fn"].reason and "a\\\\b" in reason


# -- a ctx record handed to a module-level helper --------------------------------------------

_SAVES = """
def save(c, *tensors):
    c.save_for_backward(*tensors)
    c.n = len(tensors)
    setattr(c, "tag", "mul")
"""


def test_a_helper_filling_the_record_in_forward_is_traceable():
    """What the helper does to the record is what the original's helper did to ctx: state forward made."""
    body = ("save(ctx, x)\nreturn x * 2", "(x,) = ctx.saved_tensors\nreturn g * x * ctx.n", "x", _SAVES)
    kind = decide(function(*body))
    assert kind.traceable, kind.reason


@pytest.mark.parametrize(
    ("forward", "backward", "extra", "reason"),
    [
        # backward writes the record through the helper: an effect a traced call would run once
        (
            "save(ctx, x)\nreturn x * 2",
            "bump(ctx)\nreturn g",
            _SAVES + "\ndef bump(c):\n    c.n += 1\n",
            "backward calls bump, which writes c.n",
        ),
        # the helper also writes module-level state
        (
            "save(ctx, x)\nreturn x * 2",
            "return g",
            _SAVES.replace("c.n = len", "STATE.count += 1\n    c.n = len"),
            "forward calls save, which updates module-level STATE.count",
        ),
    ],
)
def test_a_helper_handed_the_record_otherwise_is_side_effecting(forward, backward, extra, reason):
    kind = decide(function(forward, backward, "x", extra))
    assert (kind.kind, kind.reason) == ("side_effecting", reason)


# -- a forward writing into its arguments (inliner/runtime/_dynamo.py, argument effects) ---------


@pytest.mark.parametrize(
    ("forward", "params", "writes"),
    [
        ("seen.append(x)\nreturn x * 2", "x, seen", (1,)),
        ("cache[len(cache)] = x\nseen.extend([x])\nreturn x * 2", "x, seen, cache", (1, 2)),
        ("seen[0].append(x)\nreturn x * 2", "x, seen", ()),
        ("seen.data[0] = x\nreturn x * 2", "x, seen", ()),
        # not only into arguments, or not into what the caller passed
        ("seen.append(x)\nLOG.append(1)\nreturn x * 2", "x, seen", ()),
        ("seen = seen or []\nseen.append(x)\nreturn x * 2", "x, seen", ()),
        ("box['calls'] = box['calls'] + 1\nLOG.append(1)\nreturn x * 2", "x, box", ()),
        ("keep(seen, x)\nreturn x * 2", "x, seen", ()),
    ],
)
def test_a_forward_writing_only_into_its_arguments_names_them(forward, params, writes):
    extra = "LOG = []\n\ndef keep(where, x):\n    where.append(x)\n"
    kind = decide(function(forward, params=params, extra=extra))
    assert kind.part("forward").kind == "side_effecting"
    assert kind.part("forward").argument_writes == writes


# -- the backward apart (the split path, inliner/runtime/_split.py) ------------------------------


def _custom_vjp_keywords(source: str) -> dict[str, object]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "custom_vjp":
            return {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg != "saved_for_backward_idx"}
    raise AssertionError("no custom_vjp call")


def test_a_backward_alone_with_side_effects_leaves_the_forward_traceable():
    kind = decide(function("return x * 2", "LOG.append(1)\nreturn g * 2"))
    assert (kind.kind, kind.part("forward").kind, kind.part("backward").kind) == (
        "side_effecting",
        "traceable",
        "side_effecting",
    )
    keywords = _custom_vjp_keywords(flatten(function("return x * 2", "LOG.append(1)\nreturn g * 2")).source)
    assert keywords["backward_kind"] == "side_effecting"
    assert keywords["backward_nones"] == ()
    assert "compile_kind" not in keywords


def test_a_forward_with_side_effects_says_nothing_of_its_backward():
    source = flatten(function("LOG.append(1)\nreturn x * 2", "LOG.append(2)\nreturn g * 2")).source
    keywords = _custom_vjp_keywords(source)
    assert keywords["compile_kind"] == "side_effecting"
    assert "backward_kind" not in keywords and "backward_nones" not in keywords


@pytest.mark.parametrize(
    "backward,nones",
    [
        ("LOG.append(1)\nreturn g * 2, None", (1,)),
        ("LOG.append(1)\nif g.dim() > 1:\n    return None, g\nreturn None, g * 2", (0,)),
        ("LOG.append(1)\nif g.dim() > 1:\n    return None, g\nreturn g, None", None),  # mixed: not known
        ("LOG.append(1)\ngrads = (g, None)\nreturn grads", None),  # a name holding a tuple: not known
        ("LOG.append(1)\ngrad = g * 2\nreturn grad", ()),
        ("LOG.append(1)\nreturn (*[g], None)", None),
        ("LOG.append(1)\ngrads = [g]\nreturn (None, *grads)", (0,)),  # known before the starred list
        ("LOG.append(1)\nreturn (g * 2, *[None] * 1)", (1,)),  # a starred list of Nones
        ("LOG.append(1)\nreturn (g * 2, *(None,))", (1,)),
        ("LOG.append(1)\nif g.dim() > 1:\n    return (None, *[g])\nreturn (None, g)", None),  # two shapes
        ("LOG.append(1)\n\ndef inner():\n    return None, None\n\nreturn g, g", ()),  # a nested return is not bwd's
        # a name inside a with block is not bound by the with: only its "as" target is
        ("LOG.append(1)\nwith torch.no_grad():\n    out = g * 2\nreturn out", ()),
        ("LOG.append(1)\nwith torch.no_grad():\n    return g", ()),
        ("LOG.append(1)\nwith torch.no_grad():\n    grads = g, None\n    return grads", None),
        ("LOG.append(1)\nwith torch.no_grad() as grads:\n    pass\nreturn grads", None),
        ("LOG.append(1)\nfor grads in [(g, None)]:\n    pass\nreturn grads", None),
        # a backward that always raises gives no gradient at all (fla-core's "not implemented")
        ("LOG.append(1)\nraise NotImplementedError('no backward')", ()),
        ("LOG.append(1)\nif g.dim() > 1:\n    raise ValueError('2-d')", None),  # falls off the end otherwise
    ],
)
def test_backward_nones_are_the_literal_nones_of_every_return(backward, nones):
    keywords = _custom_vjp_keywords(flatten(function("return x * w", backward, params="x, w")).source)
    assert keywords["backward_kind"] == "side_effecting"
    assert keywords.get("backward_nones") == nones


@pytest.mark.parametrize(
    "forward,backward",
    [
        ("ctx.seen = []\nreturn x * 2", "ctx.seen.append(1)\nreturn g * 2"),
        ("ctx.cache = {}\nreturn x * 2", "ctx.cache['g'] = g\nreturn g * 2"),
        ("ctx.cache = {}\nreturn x * 2", "LOG.append(1)\nctx.cache.update(g=g)\nreturn g * 2"),
        ("ctx.pending = [x]\nreturn x * 2", "del ctx.pending[0]\nreturn g * 2"),
        ("ctx.seen = []\nreturn x * 2", "seen = ctx.seen\nseen += [1]\nreturn g * 2"),
        ("ctx.seen = []\nreturn x * 2", "kept = ctx.seen\nkept.append(1)\nreturn g * 2"),
        ("ctx.cache = {}\nreturn x * 2", "inner = ctx.cache\nslot = inner\nslot['g'] = g\nreturn g * 2"),
    ],
)
def test_a_backward_changing_a_list_or_dict_forward_kept_keeps_the_call_eager(forward, backward):
    """On the split path a list or dict kept on ctx is rebuilt for each compiled backward,
    where the original's next backward (retain_graph), or its caller, sees the change."""
    kind = decide(function(forward, backward))
    assert kind.part("forward").kind == "side_effecting"
    assert "rebuild for each backward" in kind.part("forward").reason


def test_a_backward_calling_an_object_forward_kept_may_take_the_split_path():
    """A method of an object kept on ctx (not a list's or dict's ``append``/``update``...)
    changes that object, which the split path hands every backward as it is."""
    kind = decide(function("ctx.holder = HOLDER\nreturn x * 2", "ctx.holder.record(g)\nreturn g * 2"))
    assert (kind.part("forward").kind, kind.part("backward").kind) == ("traceable", "side_effecting")
