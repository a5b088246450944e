"""Compile-kind features for the fuzzer's generated modules (``tests/support/fuzz_gen.py``).

Drawn after every other decision (so a recorded list of draws from before still
replays the same module, with these features off), they change a generated module:

- a statement at the top of the main Function's forward and/or backward: a side effect
  (a module-level log, a counter on a state object; in forward, a plain set of an
  attribute of one, which takes the split path) or an opaque call (numpy,
  ``.tolist()``, a branch on tensor data), none of which changes a value the harness
  compares;
- a second Function, ``ObjFn``, that takes a non-tensor object: a list it appends to, an
  object it counts calls on, a dataclass or an ``nn.Module`` it reads, a lambda or a
  module it calls.

Each feature knows the kind and reason the engine must decide (``Generated.compile_kinds``),
and a module with side effects defines ``side_effect_log()`` / ``reset_side_effects()``
(the convention of tests/support/golden.py), so the oracle compares the effects too.
"""

from __future__ import annotations

from dataclasses import dataclass

#: (feature, kind, reason as the engine words it, statement); ``{t}``: a tensor parameter
FORWARD_EFFECTS = [
    None,
    ("fwd_log", "side_effecting", "forward appends to module-level LOG", 'LOG.append("forward")'),
    ("fwd_counter", "side_effecting", "forward updates module-level STATE.calls", "STATE.calls += 1"),
    # a plain set: dynamo traces and replays it as the original's (the split path)
    ("fwd_set", "opaque", "forward sets module-level STATE.last", "STATE.last = {t}.detach() * 2"),
    ("fwd_numpy", "opaque", "forward calls numpy.zeros", "_scratch = np.zeros(1)"),
    ("fwd_tolist", "opaque", "forward calls {t}.detach().tolist()", "_values = {t}.detach().tolist()"),
    (
        "fwd_branch",
        "opaque",
        "forward branches on a tensor's value (({t}.abs() > 1000.0).any())",
        'if ({t}.abs() > 1000.0).any():\n    raise ValueError("too large")',
    ),
]
BACKWARD_EFFECTS = [
    None,
    ("bwd_counter", "side_effecting", "backward updates module-level STATE.calls", "STATE.calls += 1"),
    ("bwd_log", "side_effecting", "backward appends to module-level LOG", 'LOG.append("backward")'),
]
_RANK = {"traceable": 0, "opaque": 1, "side_effecting": 2}

PRELUDE = """\
import numpy as np
from dataclasses import dataclass

LOG = []


class _State:
    calls = 0
    last = None


STATE = _State()
COUNTER = _State()


def side_effect_log():
    counted = [("counter", COUNTER.calls), ("counted", COUNTER.last)]
    return [*LOG, ("calls", STATE.calls), ("last", STATE.last), *counted, *SEEN]


def reset_side_effects():
    LOG.clear()
    SEEN.clear()
    STATE.calls = COUNTER.calls = 0
    STATE.last = COUNTER.last = None


SEEN = []


@dataclass
class Params:
    weight: torch.Tensor
    shift: float
"""


@dataclass(frozen=True)
class ObjectArgument:
    feature: str
    kind: str
    reason: str
    forward: str  # the body of forward(ctx, x, obj)
    make: str  # an expression building the object in a scenario
    backward_factor: str  # a factor of the (deliberately wrong) gradient


OBJECT_ARGUMENTS = [
    None,
    ObjectArgument(
        "obj_list",
        "side_effecting",
        "forward appends to argument obj",
        "obj.append(x.detach().clone())\nreturn x * 2",
        "SEEN",
        "3.0",
    ),
    # a counter on what the caller passed: dynamo makes it dynamic, as for the original
    ObjectArgument(
        "obj_counter",
        "opaque",
        "forward updates argument obj.calls",
        "obj.calls += 1\nobj.last = x.detach() * 2\nreturn x * 2",
        "COUNTER",
        "3.0",
    ),
    ObjectArgument(
        "obj_dataclass", "traceable", "", "return x * obj.weight + obj.shift", "Params(torch.ones(3) * 0.5, 1.5)", "5.0"
    ),
    ObjectArgument(
        "obj_lambda",
        "opaque",
        "forward calls obj, passed in as an argument",
        "return obj(x)",
        "lambda t: t * 3 + 1",
        "7.0",
    ),
    ObjectArgument(
        "obj_module_read",
        "traceable",
        "",
        "return torch.nn.functional.linear(x, obj.weight, obj.bias)",
        "_linear()",
        "2.0",
    ),
    ObjectArgument(
        "obj_module_call",
        "opaque",
        "forward calls obj, passed in as an argument",
        "return obj(x)",
        "_linear()",
        "4.0",
    ),
]

_LINEAR = """\
def _linear():
    torch.manual_seed(5)
    return torch.nn.Linear(3, 3)
"""


def add_compile_features(
    ch, source: str, main: str, tensor: str, features: set[str], avoid: frozenset[str] = frozenset()
) -> tuple[str, dict, list[str]]:
    """Return the new source, the expected ``{class: (kind, reason)}`` and the classes added.

    With ``effect_before_saved_unpack`` in ``avoid`` (a known difference, fuzz_gen.KNOWN_BUGS),
    a backward effect goes just before backward's return instead of first."""
    forward, backward, obj = (_pick(ch, options) for options in (FORWARD_EFFECTS, BACKWARD_EFFECTS, OBJECT_ARGUMENTS))
    expected: dict[str, tuple[str, str]] = {main: ("traceable", "")}
    if forward is None and backward is None and obj is None:
        return source, expected, []
    lines = source.split("\n")
    lines = _insert_after_import(lines, PRELUDE + ("\n\n" + _LINEAR if obj is not None else ""))
    found = []
    for effect, method in ((forward, "forward"), (backward, "backward")):
        if effect is None:
            continue
        feature, kind, reason, statement = effect
        features.add(feature)
        last = method == "backward" and "effect_before_saved_unpack" in avoid
        lines = _insert_in_method(lines, main, method, statement.format(t=tensor), last=last)
        found.append((kind, reason.format(t=tensor)))
    if found:
        expected[main] = max(found, key=lambda f: _RANK[f[0]])  # max keeps the first of equal kinds
    added = []
    if obj is not None:
        features.add(obj.feature)
        lines += _object_function(obj).split("\n")
        expected["ObjFn"] = (obj.kind, obj.reason)
        added.append("ObjFn")
    return "\n".join(lines), expected, added


def _pick(ch, options: list):
    """None (the feature off) about half the time, else one of ``options``."""
    index = ch.draw(2 * len(options))
    return options[index] if index < len(options) else None


def _insert_after_import(lines: list[str], text: str) -> list[str]:
    index = lines.index("import torch") + 1
    return [*lines[:index], "", *text.rstrip("\n").split("\n"), *lines[index:]]


def _insert_in_method(lines: list[str], cls: str, method: str, statement: str, *, last: bool = False) -> list[str]:
    """Put ``statement`` first in ``cls.method`` (``vjp`` stands in for ``backward``), or with
    ``last`` just before its final line (the generator ends every body with its return)."""
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(f"class {cls}("))
    names = ("backward", "vjp") if method == "backward" else ("forward",)
    for i in range(start + 1, len(lines)):
        stripped = lines[i].lstrip()
        if any(stripped.startswith(f"def {name}(") for name in names):
            indent = lines[i][: len(lines[i]) - len(stripped)] + "    "
            body = [indent + part for part in statement.split("\n")]
            at = i + 1
            if last:
                at = i + 1
                while at < len(lines) and (not lines[at].strip() or lines[at].startswith(indent)):
                    at += 1
                while not lines[at - 1].strip():
                    at -= 1
                at -= 1  # before the return
            return [*lines[:at], *body, *lines[at:]]
    raise AssertionError(f"no {method} in {cls}")


def _object_function(obj: ObjectArgument) -> str:
    forward = "\n".join("        " + line for line in obj.forward.split("\n"))
    return f"""

class ObjFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, obj):
{forward}

    @staticmethod
    def backward(ctx, g):
        return g * {obj.backward_factor}, None


def scenario_object_argument():
    x = torch.randn(3, requires_grad=True)
    obj = {obj.make}
    y = ObjFn.apply(x, obj)
    return [x], (y, ObjFn.apply(x * 2, obj))
"""


@dataclass(frozen=True)
class FlowFunction:
    """A third Function, ``FlowFn``, whose forward dynamo may trace but not put in a graph
    as one op (issue 27's split path): a numpy body, a passed-in function it calls, a
    dataclass argument; some with a backward-only side effect."""

    feature: str
    params: str  # after x
    forward: str
    backward: str
    args: str  # after x, in the scenario


_NUMPY = "return torch.from_numpy(x.detach().numpy() * 2.0 + 1.0)"
_COUNT = "STATE.calls += 1\n"
FLOW_FUNCTIONS = [
    FlowFunction("flow_numpy", "", _NUMPY, "return g * 3.0", ""),
    FlowFunction("flow_numpy_bwd_counter", "", _NUMPY, _COUNT + "return g * 3.0", ""),
    FlowFunction("flow_callable", ", fn", "return fn(x) * 2.0", "return g * 5.0, None", ", _affine"),
    FlowFunction(
        "flow_callable_bwd_counter", ", fn", "return fn(x) * 2.0", _COUNT + "return g * 5.0, None", ", _affine"
    ),
    FlowFunction(
        "flow_dataclass_callable",
        ", p, fn",
        "return fn(x * p.weight + p.shift)",
        _COUNT + "return g * 7.0, None, None",
        ", Params(torch.ones(3) * 0.5, 1.5), _affine",
    ),
]

_AFFINE = """\
def _affine(t):
    return t * 3.0 + 1.0
"""


def add_flow_function(ch, source: str, features: set[str]) -> tuple[str, list[str]]:
    """Maybe append ``FlowFn`` and its scenario (drawn last); the new source and classes added."""
    flow = _pick(ch, FLOW_FUNCTIONS)
    if flow is None:
        return source, []
    features.add(flow.feature)
    lines = source.split("\n")
    if "STATE = _State()" not in source:
        lines = _insert_after_import(lines, PRELUDE)
    return "\n".join(lines) + _flow_function(flow), ["FlowFn"]


def _flow_function(flow: FlowFunction) -> str:
    def body(text: str) -> str:
        return "\n".join("        " + line for line in text.split("\n"))

    return f"""

{_AFFINE}

class FlowFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x{flow.params}):
{body(flow.forward)}

    @staticmethod
    def backward(ctx, g):
{body(flow.backward)}


def scenario_flow():
    x = torch.randn(3, requires_grad=True)
    y = FlowFn.apply(x{flow.args})
    return [x], (y, FlowFn.apply(x * 2{flow.args}))
"""
