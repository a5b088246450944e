"""A generator of random but valid ``torch.autograd.Function`` modules for differential fuzzing.

Every random decision goes through a ``Chooser`` whose single primitive is
``draw(n) -> 0..n-1`` with 0 meaning "the simplest option / feature off". Three
choosers drive the same builder:

- ``RandomChooser(seed)``: a ``random.Random`` (fast; used by the long profile); it
  records every draw, so a failing module can be replayed and shrunk;
- ``ReplayChooser(draws)``: replays a recorded list (values are clamped, missing
  ones read as 0), which is what ``shrink`` edits;
- ``DataChooser(data)``: draws from hypothesis' ``st.data()``, so hypothesis
  shrinks a failing module towards fewer features by itself.

A generated module holds one Function (plus call sites: ``.apply``, an alias, an
``nn.Module`` attribute or a factory), ``scenario_*()`` functions in the protocol
of ``tests/support/harness.py`` and ``probe_*`` functions that the oracle differentiates
with ``torch.func`` (``probe_kw_*`` call it with keywords: ``keyword_probes``).
``tests/support/fuzz_gen_compile.py`` may add side effects and opaque calls to its bodies, and
a second Function taking a non-tensor object, each with the compile kind it implies.
Every backward is deliberately *not* the true derivative (scaled and shifted), so a
rewrite that differentiates through the forward is caught.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tests.support.fuzz_gen_compile import add_compile_features, add_flow_function

# -- choosers ------------------------------------------------------------------


class Chooser:
    def draw(self, n: int) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def int(self, lo: int, hi: int) -> int:
        return lo + self.draw(hi - lo + 1)

    def bool(self, percent: int) -> bool:
        """True with about ``percent`` % probability; a draw of 0 is False."""
        return self.draw(100) >= 100 - percent

    def choice(self, seq: Sequence):
        return seq[self.draw(len(seq))]

    def sample(self, seq: Sequence, k: int) -> list:
        pool = list(seq)
        out = []
        for _ in range(min(k, len(pool))):
            out.append(pool.pop(self.draw(len(pool))))
        return out


class RandomChooser(Chooser):
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.record: list[int] = []

    def draw(self, n: int) -> int:
        value = self.rng.randrange(n)
        self.record.append(value)
        return value


class ReplayChooser(Chooser):
    def __init__(self, draws: Sequence[int]) -> None:
        self.draws = list(draws)
        self.index = 0
        self.record: list[int] = []

    def draw(self, n: int) -> int:
        value = self.draws[self.index] if self.index < len(self.draws) else 0
        self.index += 1
        value = min(max(value, 0), n - 1)
        self.record.append(value)
        return value


class DataChooser(Chooser):
    def __init__(self, data) -> None:
        from hypothesis import strategies as st

        self.data = data
        self.st = st
        self.record: list[int] = []

    def draw(self, n: int) -> int:
        value = 0 if n == 1 else self.data.draw(self.st.integers(0, n - 1))
        self.record.append(value)
        return value


# -- what the generator tells the oracle -----------------------------------------


@dataclass
class Probe:
    """``probe_<i>(*tensors)`` calls the Function and returns its float tensor outputs as a tuple."""

    name: str
    n_tensors: int
    shape: tuple[int, ...]
    second_order: bool  # the backward is differentiable (no once_differentiable)
    func_ok: bool = True  # torch.func can run it at all (no in-place on inputs, no autocast)
    errors_match: bool = False  # an error of the eager original must be the rewrite's under torch.func


@dataclass
class Generated:
    source: str
    classes: list[str]
    probes: list[Probe]
    features: set[str] = field(default_factory=set)
    draws: list[int] = field(default_factory=list)
    #: per class, the compile kind and reason the engine must decide (tests/support/fuzz_gen_compile.py)
    compile_kinds: dict[str, tuple[str, str]] = field(default_factory=dict)


# -- small code-building helpers ---------------------------------------------------

TENSOR_NAMES = [
    ["x", "w", "b", "y"],
    ["a", "b", "c", "d"],
    ["input", "weight", "bias", "other"],
    ["t0", "t1", "t2", "t3"],
]
CTX_NAMES = ["ctx", "self", "c", "context"]
SHAPES = [(3,), (2, 3)]


@dataclass
class Param:
    name: str
    kind: str  # tensor | float | int | dims | flag | opt
    default: str | None = None

    @property
    def tensor(self) -> bool:
        return self.kind == "tensor"


NONTENSOR_VALUES = {
    "float": ["2.0", "0.5", "3.0"],
    "int": ["2", "1", "3"],
    "dims": ["(1, 2)", "(3,)"],
    "flag": ["True", "False"],
    "opt": ["None", "1.5"],
}
NONTENSOR_NAMES = {"float": "k", "int": "n", "dims": "dims", "flag": "flag", "opt": "opt"}


def _scalar_uses(params: list[Param]) -> list[str]:
    out = []
    for p in params:
        if p.kind == "float":
            out.append(p.name)
        elif p.kind == "int":
            out.append(f"float({p.name})")
        elif p.kind == "dims":
            out.append(f"len({p.name})")
        elif p.kind == "opt":
            out.append(f"(1.0 if {p.name} is None else {p.name})")
    return out


def _texpr(ch: Chooser, tensors: list[str], scalars: list[str]) -> str:
    """A float tensor expression of the common shape over ``tensors`` (non-empty)."""
    a = ch.choice(tensors)
    b = ch.choice(tensors)
    s = ch.choice(scalars) if scalars else "2.0"
    forms = [
        f"{a} * 2.0",
        f"{a} * {b}",
        f"{a} + {b} * 0.5",
        f"{a}.sin() * {s}",
        f"torch.tanh({a}) + {b}",
        f"({a} - {b}).abs()",
        f"{a} ** 2",
        f"{a}.exp() * 0.1",
        f"{a}.clamp(-1, 1) * {s}",
        f"{a} * ({b}.flatten() @ {a}.flatten())",
        f"{a} * 1",
    ]
    return ch.choice(forms)


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def extend(self, other: _Lines, indent: int = 0) -> None:
        for line in other.lines:
            self.lines.append(("    " * indent + line) if line else line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


@dataclass
class _State:
    """What is set on ctx along one path (flag value) of forward."""

    saved: list[str] | None = None  # kinds: "tensor" | "none"; None = never saved
    attrs: dict[str, str] = field(default_factory=dict)  # name -> kind

    def copy(self) -> _State:
        return _State(None if self.saved is None else list(self.saved), dict(self.attrs))


# -- the Function builder ----------------------------------------------------------


class FunctionBuilder:
    def __init__(self, ch: Chooser, name: str, features: set[str], avoid: frozenset[str] = frozenset()) -> None:
        self.ch = ch
        self.name = name
        self.features = features
        self.avoid = avoid
        #: module-level functions ctx is handed to (name -> source), written before the class
        self.helpers: dict[str, str] = {}
        self.jvp = False  # a forward-mode rule (combined style, plain outputs only)
        self.bwd_writes = False  # backward writes ctx: a second backward sees it

    def helper(self, name: str, source: str) -> str:
        self.helpers[name] = source
        return name

    def feature(self, name: str, percent: int) -> bool:
        on = self.ch.bool(percent)
        if on:
            self.features.add(name)
        return on

    def attr_reads_attr(self, body: _Lines, plain: list[str], counter: list[int], for_paths) -> None:
        """An attribute read on the right of an assignment, after it was set on every path:
        of itself (``ctx.s = ctx.s * 2.0``) or of another (``ctx.d = ctx.t * 2.0 + 1.0``)."""
        numeric = [n for n in plain if n.startswith(("t_", "s_"))]
        if not numeric or not self.feature("attr_reads_attr", 15):
            return
        ctx, source = self.ctx, self.ch.choice(numeric)
        if self.ch.bool(40):
            body.add(0, f"{ctx}.{source} = {ctx}.{source} * 2.0")
            return
        name = f"d_{counter[0]}"
        counter[0] += 1
        kind = "tensor" if source.startswith("t_") else "float"
        body.add(0, f"{ctx}.{name} = {ctx}.{source} * 2.0 + 1.0")
        for_paths(None, lambda state: state.attrs.update({name: kind}))

    # -- parameters ------------------------------------------------------------
    def params(self) -> None:
        ch = self.ch
        names = ch.choice(TENSOR_NAMES)
        n_t = ch.int(1, 4)
        tensors = [Param(n, "tensor") for n in names[:n_t]]
        kinds = ch.sample(["float", "int", "dims", "flag", "opt"], ch.draw(4))
        others = [Param(NONTENSOR_NAMES[k], k) for k in kinds]
        order = list(tensors)
        for p in others:
            if ch.bool(20):
                order.insert(ch.draw(len(order) + 1), p)
                self.features.add("interleaved_params")
            else:
                order.append(p)
        # defaults: a trailing run of non-tensor params
        for p in reversed(order):
            if p.tensor or not ch.bool(40):
                break
            p.default = ch.choice(NONTENSOR_VALUES[p.kind])
            self.features.add("defaults")
        self.order = order
        self.tensors = tensors
        self.others = others
        self.flag = next((p for p in others if p.kind == "flag"), None)

    def ensure_flag(self) -> Param:
        if self.flag is None:
            self.flag = Param("flag", "flag")
            self.others.append(self.flag)
            # keep defaults trailing: insert before the first defaulted param
            idx = next((i for i, p in enumerate(self.order) if p.default is not None), len(self.order))
            self.order.insert(idx, self.flag)
        return self.flag

    # -- whole class -----------------------------------------------------------
    def build(self) -> tuple[str, dict]:
        ch = self.ch
        self.params()
        self.shape = ch.choice(SHAPES)
        self.style = "setup_context" if self.feature("setup_context", 25) else "combined"
        self.kwonly = self.style == "combined" and self.feature("kwonly_param", 8)
        self.ctx = ch.choice(CTX_NAMES) if self.feature("ctx_name", 25) else "ctx"
        if self.style == "combined" or "setup_refusal_crash" in self.avoid:
            # a combined forward cannot take `c` twice; setup_context may (a known engine crash)
            while self.ctx in {p.name for p in self.order}:
                self.ctx += "_"
        self.bctx = self.ctx if not ch.bool(15) else ch.choice(CTX_NAMES)
        self.once = self.feature("once_differentiable", 20)
        self.amp = self.style == "combined" and self.feature("amp", 15)
        self.amp_cast = self.amp and ch.bool(50)
        self.amp_bwd = self.amp and not ch.bool(10)
        self.choose_decorators()
        self.materialize_off = self.feature("materialize_false", 20)
        self.nig = self.feature("needs_input_grad", 20)
        if self.style == "combined":
            fwd = self.combined_forward()
        else:
            fwd = self.setup_context_forward()
        bwd = self.backward()
        lines = _Lines()
        lines.add(0, f"class {self.name}(torch.autograd.Function):")
        if self.style == "setup_context" and ch.bool(20):
            lines.add(1, "generate_vmap_rule = True")
            lines.add(0, "")
        lines.extend(fwd, 1)
        lines.add(0, "")
        lines.extend(bwd, 1)
        if self.jvp:
            lines.add(0, "")
            lines.extend(self.jvp_method(), 1)
        info = {
            "order": self.order,
            "tensors": self.tensors,
            "flag": self.flag,
            "shape": self.shape,
            "n_out": self.n_out,
            "out_kinds": self.out_kinds,
            "dirty": self.dirty,
            "once": self.once,
            "amp": self.amp,
            "amp_cast": self.amp_cast,
            "bare": self.bare_return,
            "helpers": self.decorator_helpers,
            "counted": "counted" in self.decorator_helpers,
        }
        return lines.text(), info

    # -- decorators --------------------------------------------------------------
    def choose_decorators(self) -> None:
        """torch's own (``once_differentiable``, AMP, possibly through module-level
        aliases) plus, sometimes, decorators the engine does not know and replays:
        project wrappers (``DECORATOR_HELPERS``) and grad-mode contexts."""
        ch = self.ch
        self.decorator_helpers: list[str] = []
        fwd: list[str] = []
        bwd: list[str] = ["@once_differentiable"] if self.once else []
        alias = self.amp and self.feature("amp_alias", 40)
        if self.amp:
            if alias:
                self.decorator_helpers.append("amp_aliases")
                fwd.append("@custom_fwd_cpu(cast_inputs=torch.float32)" if self.amp_cast else "@custom_fwd_cpu")
            else:
                cast = ", cast_inputs=torch.float32" if self.amp_cast else ""
                fwd.append(f'@torch.amp.custom_fwd(device_type="cpu"{cast})')
        if self.amp_bwd:
            bwd.append("@custom_bwd_cpu" if alias else '@torch.amp.custom_bwd(device_type="cpu")')
        self.bwd_no_grad = False
        if self.feature("decorators", 25):
            # a setup_context forward takes no ctx: the engine replays no decorator there
            members = [fwd, bwd] if self.style == "combined" else [bwd]
            for _ in range(ch.int(1, 3)):
                target = ch.choice(members)
                kind = ch.choice(["forwarding", "counted", "contiguous", "guard", "no_grad"])
                self.features.add(f"decorator_{kind}")
                if kind == "no_grad":
                    text = "@torch.no_grad()"
                    self.bwd_no_grad = self.bwd_no_grad or target is bwd
                else:
                    text = {
                        "guard": f"@guard(check={ch.choice(['True', 'False'])})",
                        "contiguous": "@contiguous_args",
                    }.get(kind, f"@{kind}")
                    if kind not in self.decorator_helpers:
                        self.decorator_helpers.append(kind)
                target.insert(ch.draw(len(target) + 1), text)
        self.fwd_decorators = fwd
        self.bwd_decorators = bwd

    # -- outputs ---------------------------------------------------------------
    def choose_outputs(self) -> None:
        ch = self.ch
        n_out = ch.int(1, 3)
        kinds = []
        for _ in range(n_out):
            kinds.append(ch.choice(["expr", "expr", "expr", "input", "argmax", "marked", "nontensor"]))
        if self.style == "setup_context" and "setup_refusal_crash" in self.avoid:
            kinds = ["argmax" if k == "marked" else k for k in kinds]
        if "expr" not in kinds and "input" not in kinds:
            kinds[0] = "expr"
        if self.dirty is not None:
            kinds[ch.draw(n_out)] = "dirty"
        if "nontensor" in kinds and not self.others:
            kinds = ["expr" if k == "nontensor" else k for k in kinds]
        self.out_kinds = kinds
        self.n_out = n_out
        names = [p.name for p in self.tensors]
        self.returned = {
            j: ch.choice([n for n in names if n != self.dirty] or names) for j, k in enumerate(kinds) if k == "input"
        }
        self.bare_return = n_out == 1 and not ch.bool(20)
        for k in kinds:
            self.features.add(f"out_{k}")
        if n_out > 1:
            self.features.add("multi_output")

    # -- combined style -------------------------------------------------------
    def combined_forward(self) -> _Lines:
        ch = self.ch
        ctx = self.ctx
        body = _Lines()
        tnames = [p.name for p in self.tensors]
        scalars = _scalar_uses(self.others)

        self.dirty = None
        if self.feature("mark_dirty", 15):
            self.dirty = ch.choice(tnames)
        self.choose_outputs()
        early = self.feature("early_return", 25)
        branch = self.feature("branch_attrs", 25)
        if early or branch:
            self.ensure_flag()
            scalars = _scalar_uses(self.others)
        if self.kwonly:
            scalars.append("bias_scale")
        # late placements happen after the early-return block
        late = {k: early and ch.bool(30) and f"late_{k}" not in self.avoid for k in ("dirty", "materialize", "nondiff")}

        states = {True: _State(), False: _State()}  # flag value -> state (identical without a flag)

        def for_paths(cond: str | None, update) -> None:
            for value, state in states.items():
                if cond is None or (value if cond == "flag" else not value):
                    update(state)

        avail = list(tnames)
        # ctx shapes that only a ctx record spells: helpers given ctx, a counter backward
        # advances, tuple targets mixing ctx attributes and locals, forward reading
        # needs_input_grad, callables on ctx (tests/support/fuzz_gen.py: record features)
        helper_save = self.feature("helper_save", 12)
        helper_attr = self.feature("helper_attr", 10)
        if self.feature("bwd_counter", 8):
            body.add(0, f"{ctx}.calls = 0")
            for_paths(None, lambda state: state.attrs.update({"calls": "counter"}))
        plain_outputs = set(self.out_kinds) == {"expr"} and self.dirty is None and not self.amp
        if plain_outputs and self.feature("jvp", 30):
            self.forward_saves(body, ctx)
        # 1. in-place on the dirty input
        if self.dirty is not None:
            body.add(0, f"{self.dirty}.{ch.choice(['mul_', 'add_'])}({ch.choice(['2.0', '1.0'])})")
            if not late["dirty"]:
                body.add(0, f"{ctx}.mark_dirty({self.dirty})")
        if self.materialize_off and not late["materialize"]:
            body.add(0, f"{ctx}.set_materialize_grads(False)")
        # 2. intermediates
        inters = []
        for i in range(ch.draw(4)):
            h = f"h{i}"
            body.add(0, f"{h} = {_texpr(ch, avail, scalars)}")
            avail.append(h)
            inters.append(h)
        if "save_returned_input" in self.avoid or "saved_unread" in self.avoid:
            body.add(0, f"h_safe = {tnames[0]} * 1.0")
        marked = None
        if "marked" in self.out_kinds:
            marked = "m0"
            body.add(0, f"m0 = ({ch.choice(avail)} > 0).float()")
            if not late["nondiff"]:
                body.add(0, f"{ctx}.mark_non_differentiable(m0)")
        argmax_src = ch.choice(avail)

        # 3. a first save_for_backward
        protected = {self.dirty}

        def save_args(pool: list[str]) -> tuple[str, list[str]]:
            if "save_returned_input" in self.avoid:
                banned = set(self.returned.values()) | {self.dirty}
                pool = [n for n in pool if n not in banned] or ["h_safe"]
            n = ch.int(1, 3)
            parts, kinds = [], []
            for _ in range(n):
                r = ch.draw(10)
                if r == 0:
                    parts.append("None")
                    kinds.append("none")
                elif r == 1:
                    parts.append(f"{ch.choice(pool)} * 3.0")
                    kinds.append("tensor")
                    self.features.add("save_expression")
                else:
                    parts.append(ch.choice(pool))
                    kinds.append("tensor")
            if "none" in kinds:
                self.features.add("save_none")
            return ", ".join(parts), kinds

        def emit_save(lines: _Lines, indent: int, cond: str | None, pool: list[str]) -> None:
            text, kinds = save_args(pool)
            if helper_save:
                save = self.helper("_save", "def _save(ctx, *tensors):\n    ctx.save_for_backward(*tensors)\n")
                lines.add(indent, f"{save}({ctx}, {text})")
            else:
                lines.add(indent, f"{ctx}.save_for_backward({text})")

            def upd(state):
                state.saved = list(kinds)

            for_paths(cond, upd)

        n_saves = 0
        if self.feature("save_early", 55):
            emit_save(body, 0, None, avail)
            n_saves += 1

        # 4. attributes
        attr_counter = [0]

        def attr_value(kind: str, pool: list[str]) -> str:
            if kind == "tensor":
                return ch.choice(pool)
            if kind == "tensor_copy":
                return f"{ch.choice(pool)} * 1.0"
            if kind == "float":
                return ch.choice(scalars + ["3.0"]) if scalars else "3.0"
            if kind == "shape":
                return f"{ch.choice(pool)}.shape"
            if kind == "pair":
                return f"({ch.choice(pool)}, {ch.choice(scalars + ['2.0']) if scalars else '2.0'})"
            raise AssertionError(kind)

        def emit_attr(
            lines: _Lines,
            indent: int,
            cond: str | None,
            pool: list[str],
            name: str | None = None,
            kind: str | None = None,
        ) -> str:
            if kind is None:
                kind = ch.choice(["tensor", "float", "shape", "pair", "tensor"])
                if kind == "pair" and "pair_attr" in self.avoid:
                    kind = "float"
            if name is None:
                name = f"{ {'tensor': 't', 'float': 's', 'shape': 'shape', 'pair': 'pair'}[kind] }_{attr_counter[0]}"
                attr_counter[0] += 1
            value_kind = kind
            if kind == "tensor" and cond is not None and "one_path_attr_alias" in self.avoid:
                value_kind = "tensor_copy"
            if helper_attr:
                keep = self.helper(f"_keep_{name}", f"def _keep_{name}(ctx, value):\n    ctx.{name} = value\n")
                lines.add(indent, f"{keep}({ctx}, {attr_value(value_kind, pool)})")
            else:
                lines.add(indent, f"{ctx}.{name} = {attr_value(value_kind, pool)}")
            self.features.add(f"attr_{kind}")

            def upd(state):
                state.attrs[name] = kind

            for_paths(cond, upd)
            return name

        plain = [emit_attr(body, 0, None, avail) for _ in range(ch.draw(3))]
        self.attr_reads_attr(body, plain, attr_counter, for_paths)
        if ch.bool(10):
            # tuple assignment of two attributes
            n1, n2 = f"ta_{attr_counter[0]}", f"tb_{attr_counter[0]}"
            attr_counter[0] += 1
            body.add(0, f"{ctx}.{n1}, {ctx}.{n2} = {ch.choice(avail)}, {attr_value('float', avail)}")
            for_paths(None, lambda s: s.attrs.update({n1: "tensor", n2: "float"}))
            self.features.add("attr_tuple_target")
        if self.feature("attr_tuple_mixed", 8):
            n1 = f"tm_{attr_counter[0]}"
            attr_counter[0] += 1
            if ch.bool(50):
                body.add(0, f"{ctx}.{n1}, h_mixed = {ch.choice(avail)}, {attr_value('float', avail)}")
            else:
                body.add(0, f"h_mixed, {ctx}.{n1} = {attr_value('float', avail)}, {ch.choice(avail)}")
            for_paths(None, lambda s: s.attrs.update({n1: "tensor"}))
        if self.feature("nig_forward", 8):
            n1 = f"nig_{attr_counter[0]}"
            attr_counter[0] += 1
            body.add(0, f"{ctx}.{n1} = {ctx}.needs_input_grad[{ch.draw(len(self.tensors))}]")
            for_paths(None, lambda s: s.attrs.update({n1: "flag"}))
        if self.feature("callable_attr", 8):
            n1 = f"fn_{attr_counter[0]}"
            attr_counter[0] += 1
            body.add(0, f"{ctx}.{n1} = {ch.choice(['torch.tanh', 'torch.sin', '_double'])}")
            self.helper("_double", "def _double(t):\n    return t * 2.0\n")
            for_paths(None, lambda s: s.attrs.update({n1: "callable"}))

        # 5. a branch that sets attributes (and maybe saves) on one or both sides
        if branch:
            cond = ch.choice(["flag", "notflag"])
            cond_text = "flag" if cond == "flag" else "not flag"
            other = "notflag" if cond == "flag" else "flag"
            both = not self.feature("one_sided_attr", 25)
            names = []
            body.add(0, f"if {cond_text}:")
            for _ in range(ch.int(1, 2)):
                kind = ch.choice(["tensor", "float", "pair"])
                if kind == "pair" and "pair_attr" in self.avoid:
                    kind = "float"
                names.append((emit_attr(body, 1, cond, avail, kind=kind), kind))
            if ch.bool(25):
                emit_save(body, 1, cond, avail)
                n_saves += 1
                self.features.add("conditional_save")
            if both:
                body.add(0, "else:")
                for n, kind in names:
                    emit_attr(body, 1, other, avail, name=n, kind=kind)
                if ch.bool(20):
                    emit_save(body, 1, other, avail)
                    n_saves += 1

        # 6. rebinding names after they were saved / stored
        if self.feature("rebind", 40):
            candidates = [n for n in avail if n not in protected]
            for n in ch.sample(candidates, ch.int(1, 2)):
                body.add(0, f"{n} = {n} * 3.0 + 1.0")
            if scalars and "k" in [p.name for p in self.others] and ch.bool(50):
                body.add(0, "k = k + 100")

        # 7. early return
        def outputs_text(exprs: list[str]) -> str:
            if self.bare_return:
                return exprs[0]
            if len(exprs) == 1:
                return f"({exprs[0]},)"
            return ", ".join(exprs)

        def output_exprs(named: bool, lines: _Lines, indent: int) -> list[str]:
            exprs = []
            for j, kind in enumerate(self.out_kinds):
                if kind == "expr":
                    e = _texpr(ch, avail, scalars)
                    if named:
                        lines.add(indent, f"out{j} = {e}")
                        e = f"out{j}"
                elif kind == "input":
                    e = self.returned[j]
                elif kind == "dirty":
                    e = self.dirty
                elif kind == "argmax":
                    e = f"{argmax_src}.argmax()"
                elif kind == "marked":
                    e = marked
                else:
                    e = ch.choice([p.name for p in self.others])
                exprs.append(e)
            return exprs

        if early:
            cond = ch.choice(["flag", "notflag"])
            body.add(0, f"if {'flag' if cond == 'flag' else 'not flag'}:")
            if ch.bool(40):
                emit_save(body, 1, cond, avail)
                n_saves += 1
            if ch.bool(40):
                kinds_now = {}
                for state in states.values():
                    kinds_now.update(state.attrs)
                for n, kind in list(kinds_now.items())[:1]:
                    if kind in ("tensor", "float"):
                        emit_attr(body, 1, cond, avail, name=n, kind=kind)
            exprs = output_exprs(False, body, 1)
            body.add(1, f"return {outputs_text(exprs)}")
            # the early path is done: its state is frozen
            early_value = cond == "flag"
            frozen = states[early_value].copy()
        # 8. late placements
        if self.dirty is not None and late["dirty"]:
            body.add(0, f"{ctx}.mark_dirty({self.dirty})")
            self.features.add("late_mark_dirty")
        if self.materialize_off and late["materialize"]:
            body.add(0, f"{ctx}.set_materialize_grads(False)")
            self.features.add("late_materialize")
        if marked is not None and late["nondiff"]:
            body.add(0, f"{ctx}.mark_non_differentiable(m0)")
            self.features.add("late_nondiff")
        # 9. outputs, a late save, attributes on outputs
        exprs = output_exprs(True, body, 0)
        out_names = [e for e, k in zip(exprs, self.out_kinds) if k == "expr"]
        if self.feature("save_late", 40 if n_saves == 0 else 20):
            emit_save_cond = None
            pool = avail + out_names + ([marked] if marked else [])
            if early:
                # only the normal path reaches here
                emit_save_cond = "notflag" if early_value else "flag"
            emit_save(body, 0, emit_save_cond, pool)
            n_saves += 1
            if out_names:
                self.features.add("save_output_maybe")
        if out_names and ch.bool(20):
            n = f"o_{attr_counter[0]}"
            attr_counter[0] += 1
            chosen = ch.choice(out_names)
            if early and "one_path_attr_alias" in self.avoid:
                chosen += " * 1.0"
            body.add(0, f"{ctx}.{n} = {chosen}")
            for_paths(
                ("notflag" if early_value else "flag") if early else None, lambda s: s.attrs.update({n: "tensor"})
            )
            self.features.add("attr_output")
        body.add(0, f"return {outputs_text(exprs)}")
        if early:
            states[early_value] = frozen
        if n_saves > 1:
            self.features.add("multiple_saves")
        if "saved_unread" in self.avoid and len({s.saved is None for s in states.values()}) > 1:
            # saved on one path only: save something first on every path
            at = next(i for i, line in enumerate(body.lines) if line.startswith("h_safe = ")) + 1
            body.lines.insert(at, f"{ctx}.save_for_backward(h_safe)")
            for state in states.values():
                if state.saved is None:
                    state.saved = ["tensor"]
        self.states = states

        head = _Lines()
        head.add(0, "@staticmethod")
        for decorator in self.fwd_decorators:
            head.add(0, decorator)
        head.add(0, f"def forward({ctx}, {self.signature()}):")
        head.extend(body, 1)
        return head

    def forward_saves(self, body: _Lines, ctx: str) -> None:
        """A jvp, and what forward saves for it: every path, or only when ``flag`` (a record)."""
        ch = self.ch
        self.jvp = True
        saved = ch.sample([p.name for p in self.tensors], ch.int(1, 2))
        self.fsaved = len(saved)
        self.fsaved_conditional = self.feature("conditional_save_for_forward", 50)
        if self.fsaved_conditional:
            flag = self.ensure_flag()
            body.add(0, f"if {flag.name}:")
            body.add(1, f"{ctx}.save_for_forward({', '.join(saved)})")
            body.add(0, f"{ctx}.forward_saved = {flag.name}")
        else:
            body.add(0, f"{ctx}.save_for_forward({', '.join(saved)})")

    def jvp_method(self) -> _Lines:
        """``jvp(ctx, *tangents)``: deliberately not the true forward derivative."""
        ctx = self.ctx
        lines = _Lines()
        lines.add(0, "@staticmethod")
        lines.add(0, f"def jvp({ctx}, *tangents):")
        slots = [i for i, p in enumerate(self.order) if p.tensor]
        terms = [f"tangents[{i}] * {1.5 + k}" for k, i in enumerate(slots)]
        lines.add(1, f"tsum = {' + '.join(terms)}")
        if self.fsaved_conditional:
            lines.add(1, f"if {ctx}.forward_saved:")
            lines.add(2, f"tsum = tsum * {ctx}.saved_tensors[{self.ch.draw(self.fsaved)}]")
        else:
            lines.add(1, f"tsum = tsum * {ctx}.saved_tensors[{self.ch.draw(self.fsaved)}]")
        outs = [f"tsum * {2.0 + j}" for j in range(self.n_out)]
        if self.bare_return:
            lines.add(1, f"return {outs[0]}")
        else:
            lines.add(1, f"return {', '.join(outs)}{',' if len(outs) == 1 else ''}")
        return lines

    def signature(self) -> str:
        parts = []
        for p in self.order:
            parts.append(p.name if p.default is None else f"{p.name}={p.default}")
        if self.style == "combined" and self.kwonly:
            parts.append("*, bias_scale=1.0")
        return ", ".join(parts)

    # -- setup_context style ----------------------------------------------------
    def setup_context_forward(self) -> _Lines:
        ch = self.ch
        ctx = self.ctx
        tnames = [p.name for p in self.tensors]
        scalars = _scalar_uses(self.others)
        self.dirty = None
        if self.feature("mark_dirty", 10):
            self.dirty = ch.choice(tnames)
        self.choose_outputs()
        fwd = _Lines()
        fwd.add(0, "@staticmethod")
        fwd.add(0, f"def forward({self.signature()}):")
        avail = list(tnames)
        if self.dirty is not None:
            fwd.add(1, f"{self.dirty}.{ch.choice(['mul_', 'add_'])}(2.0)")
        for i in range(ch.draw(3)):
            fwd.add(1, f"h{i} = {_texpr(ch, avail, scalars)}")
            avail.append(f"h{i}")
        exprs = []
        for j, kind in enumerate(self.out_kinds):
            if kind == "expr":
                exprs.append(_texpr(ch, avail, scalars))
            elif kind == "input":
                exprs.append(self.returned[j])
            elif kind == "dirty":
                exprs.append(self.dirty)
            elif kind == "argmax":
                exprs.append(f"{ch.choice(avail)}.argmax()")
            elif kind == "marked":
                exprs.append(f"({ch.choice(avail)} > 0).float()")
            else:
                exprs.append(ch.choice([p.name for p in self.others]))
        if self.bare_return:
            ret = exprs[0]
        elif len(exprs) == 1:
            ret = f"({exprs[0]},)"
        else:
            ret = ", ".join(exprs)
        fwd.add(1, f"return {ret}")
        fwd.add(0, "")

        # setup_context: only picks values apart
        setup = _Lines()
        setup.add(0, "@staticmethod")
        setup.add(0, f"def setup_context({ctx}, inputs, output):")
        names = [p.name for p in self.order]
        if ch.bool(80):
            setup.add(1, f"{', '.join(names)}{',' if len(names) == 1 else ''} = inputs")
            inputs = {n: n for n in names}
        else:
            inputs = {n: f"inputs[{i}]" for i, n in enumerate(names)}
            self.features.add("inputs_indexed")
        out_names = [f"out{j}" for j in range(self.n_out)]
        if self.bare_return:
            setup.add(1, "out0 = output")
        else:
            setup.add(1, f"{', '.join(out_names)}{',' if len(out_names) == 1 else ''} = output")
        state = _State()
        if self.feature("bwd_counter", 8):
            setup.add(1, f"{ctx}.calls = 0")
            state.attrs["calls"] = "counter"
        pool = [inputs[n] for n in tnames] + [
            o for o, k in zip(out_names, self.out_kinds) if k in ("expr", "input", "dirty")
        ]
        save_pool = pool
        if "save_returned_input" in self.avoid:
            banned = {inputs[n] for n in set(self.returned.values()) | ({self.dirty} - {None})}
            banned |= {o for o, k in zip(out_names, self.out_kinds) if k in ("input", "dirty")}
            save_pool = [n for n in pool if n not in banned] or ["None"]
        if self.materialize_off:
            setup.add(1, f"{ctx}.set_materialize_grads(False)")
        if self.dirty is not None:
            setup.add(1, f"{ctx}.mark_dirty({inputs[self.dirty]})")
        if "marked" in self.out_kinds:
            j = self.out_kinds.index("marked")
            setup.add(1, f"{ctx}.mark_non_differentiable(out{j})")
        if self.feature("save_early", 60):
            n = ch.int(1, 3)
            parts, kinds = [], []
            for _ in range(n):
                if ch.draw(8) == 0:
                    parts.append("None")
                    kinds.append("none")
                else:
                    value = ch.choice(save_pool)
                    parts.append(value)
                    kinds.append("none" if value == "None" else "tensor")
            setup.add(1, f"{ctx}.save_for_backward({', '.join(parts)})")
            state.saved = kinds
        scalar_pool = [inputs[p.name] for p in self.others if p.kind == "float"] or ["3.0"]
        for i in range(ch.draw(3)):
            kind = ch.choice(["tensor", "float", "shape", "pair"])
            if kind == "pair" and "pair_attr" in self.avoid:
                kind = "float"
            if kind == "tensor":
                value = ch.choice(pool)
            elif kind == "float":
                value = ch.choice(scalar_pool)
            elif kind == "shape":
                value = f"{ch.choice(pool)}.shape"
            else:
                value = f"({ch.choice(pool)}, {ch.choice(scalar_pool)})"
            name = f"{ {'tensor': 't', 'float': 's', 'shape': 'shape', 'pair': 'pair'}[kind] }_{i}"
            setup.add(1, f"{ctx}.{name} = {value}")
            state.attrs[name] = kind
            self.features.add(f"attr_{kind}")
        self.states = {True: state, False: state.copy()}
        fwd.extend(setup)
        return fwd

    # -- backward --------------------------------------------------------------
    def backward(self) -> _Lines:
        ch = self.ch
        ctx = self.bctx
        lines = _Lines()
        lines.add(0, "@staticmethod")
        for decorator in self.bwd_decorators:
            lines.add(0, decorator)
        star = self.feature("star_grads", 10)
        method = "vjp" if self.feature("vjp_method", 5) else "backward"
        grad_names = [f"g{j}" for j in range(self.n_out)]
        if star:
            lines.add(0, f"def {method}({ctx}, *grads):")
            refs = [f"grads[{j}]" for j in range(self.n_out)]
        else:
            lines.add(0, f"def {method}({ctx}, {', '.join(grad_names)}):")
            refs = grad_names
        body = _Lines()

        # residuals usable on every path
        states = list(self.states.values())
        saved_lists = [s.saved for s in states]
        factors: list[str] = []
        reshape: str | None = None
        if all(s is not None for s in saved_lists):
            counts = {len(s) for s in saved_lists}
            common = min(counts)
            usable = [i for i in range(common) if all(s[i] == "tensor" for s in saved_lists)]
            style = ch.draw(3) if len(counts) == 1 else 1 + ch.draw(2)
            if style < 2 and self.nig and self.feature("saved_read_after_return", 30):
                # backward may return before it reads saved tensors: the read must then not happen
                nones = ", ".join("None" for _ in self.order) + ("," if len(self.order) == 1 else "")
                body.add(0, f"if not {ctx}.needs_input_grad[{ch.draw(len(self.order))}]:")
                body.add(1, f"return {nones}")
            if style == 0:
                n = common
                names = [f"s{i}" for i in range(n)]
                body.add(0, f"{', '.join(names)}{',' if n == 1 else ''} = {ctx}.saved_tensors")
                factors += [names[i] for i in usable]
            elif style == 1:
                attr = "saved_variables" if self.feature("saved_variables", 5) else "saved_tensors"
                if attr == "saved_tensors" and self.feature("helper_saved", 10):
                    saved = self.helper("_saved", "def _saved(ctx):\n    return ctx.saved_tensors\n")
                    body.add(0, f"saved = {saved}({ctx})")
                else:
                    body.add(0, f"saved = {ctx}.{attr}")
                factors += [f"saved[{i}]" for i in usable]
            else:
                factors += [f"{ctx}.saved_tensors[{i}]" for i in usable]
        elif any(s is not None for s in saved_lists) and ch.bool(30):
            # saved on one path only: reading saved_tensors gives () on the other
            body.add(0, f"saved = {ctx}.saved_tensors")
            self.features.add("saved_on_one_path")
        common_attrs = set.intersection(*(set(s.attrs) for s in states))
        one_path = set.union(*(set(s.attrs) for s in states)) - common_attrs
        kinds = {}
        for s in states:
            kinds.update(s.attrs)
        counter = False
        for name in sorted(common_attrs):
            kind = kinds[name]
            if kind == "tensor" or kind == "float":
                factors.append(f"{ctx}.{name}")
            elif kind == "pair":
                factors.append(f"{ctx}.{name}[0] * {ctx}.{name}[1]")
            elif kind == "shape":
                reshape = f"{ctx}.{name}"
            elif kind == "flag":
                factors.append(f"(2.0 if {ctx}.{name} else 3.0)")
            elif kind == "callable":
                factors.append(f"{ctx}.{name}(gsum)")
            elif kind == "counter":
                counter = True
        if counter:
            body.add(0, f"{ctx}.calls += 1")
            self.bwd_writes = True
        if one_path and ch.bool(70):
            name = sorted(one_path)[0]
            read = f"{ctx}.{name}" if kinds[name] != "pair" else f"{ctx}.{name}[0]"
            if self.feature("hasattr_one_path", 30):
                read = f"({read} if hasattr({ctx}, {name!r}) else 1.0)"
            factors.append(read)
            self.features.add("reads_one_path_attr")

        # the combined incoming gradient
        terms = []
        for j, kind in enumerate(self.out_kinds):
            ref = refs[j]
            if kind in ("expr", "input", "dirty"):
                if self.materialize_off:
                    terms.append(f"({ref} if {ref} is not None else 1000.0) * {1.5 + j}")
                else:
                    terms.append(f"{ref} * {1.5 + j}")
            elif kind == "marked" and self.materialize_off:
                terms.append(f"(7.0 if {ref} is None else 0.0)")
        body.add(0, f"gsum = {' + '.join(terms)}")
        if counter:
            body.add(0, f"gsum = gsum * {ctx}.calls")
        grads = []
        tensor_index = 0
        for slot, p in enumerate(self.order):
            if not p.tensor:
                grads.append("None")
                continue
            used = ch.sample(factors, ch.draw(4)) if factors else []
            expr = " * ".join(["gsum", *used, str(2.0 + tensor_index)]) + f" + gsum * {0.25 * (slot + 1)}"
            if reshape is not None and ch.bool(50):
                expr = f"({expr}).reshape({reshape})"
            if self.nig and ch.bool(50):
                other = ch.draw(len(self.order))
                expr = f"({expr}) * (2.0 if {ctx}.needs_input_grad[{other}] else 3.0)"
            var = f"grad_{p.name}"
            if self.nig and ch.bool(60):
                if ch.bool(50):
                    body.add(0, f"{var} = None")
                    body.add(0, f"if {ctx}.needs_input_grad[{slot}]:")
                    body.add(1, f"{var} = {expr}")
                else:
                    body.add(0, f"{var} = {expr} if {ctx}.needs_input_grad[{slot}] else None")
            else:
                body.add(0, f"{var} = {expr}")
            grads.append(var)
            tensor_index += 1
        if "saved_unread" in self.avoid and any(s is not None for s in saved_lists):
            if not any("saved_tensors" in line or "saved_variables" in line for line in body.lines):
                body.lines.insert(0, f"_unused = {ctx}.saved_tensors")
        if ch.bool(10):
            grads.append("None")
            self.features.add("extra_none_grad")
        # backward drops what it used (real code frees memory this way): a second backward fails
        droppable = sorted(n for n in common_attrs if kinds[n] not in ("counter", "shape"))
        if droppable and self.feature("bwd_drop", 10):
            name = ch.choice(droppable)
            body.add(0, f"del {ctx}.{name}" if ch.bool(50) else f"{ctx}.{name} = None")
            self.bwd_writes = True
        if len(grads) == 1 and ch.bool(60):
            body.add(0, f"return {grads[0]}")
        else:
            body.add(0, f"return {', '.join(grads)}{',' if len(grads) == 1 else ''}")
        lines.extend(body, 1)
        return lines


# -- the module ---------------------------------------------------------------------

HELPERS = """\
def _rel(out, args):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [
        [o is a for a in args] + [getattr(o, "_base", None) is a for a in args]
        for o in outs
        if isinstance(o, torch.Tensor)
    ]


def _total(out):
    outs = out if isinstance(out, tuple) else (out,)
    return sum(o.float().sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad)
"""


#: Module-level code the chosen decorators need (``FunctionBuilder.choose_decorators``).
DECORATOR_HELPERS = {
    "amp_aliases": """\
custom_fwd_cpu = functools.partial(torch.amp.custom_fwd, device_type="cpu")
custom_bwd_cpu = functools.partial(torch.amp.custom_bwd, device_type="cpu")
""",
    "forwarding": """\
def forwarding(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper
""",
    "counted": """\
CALLS = []


def counted(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        CALLS.append(fn.__qualname__)
        return fn(ctx, *args)

    return wrapper
""",
    "contiguous": """\
def contiguous_args(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        return fn(ctx, *args, **kwargs)

    return wrapper
""",
    "guard": """\
def guard(check=False):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            if check:
                for a in args[1:]:
                    if isinstance(a, torch.Tensor) and not a.is_floating_point():
                        raise TypeError(f"{fn.__qualname__}: {a.dtype}")
            return fn(*args)

        return wrapper

    return decorator
""",
}


#: Engine bugs found by this fuzzer that are still open at HEAD fb94942; the generator
#: steers around them (``--avoid all`` in the long profile, ``CI_AVOID`` in
#: tests/fuzz/test_fuzz.py) so runs keep finding new differences. Each has an xfail in
#: tests/fuzz/test_fuzz_regressions.py; delete the entry when its fix lands.
KNOWN_BUGS: dict[str, str] = {}

#: Knobs for bugs that are fixed (kept so older engines can still be fuzzed around them).
FIXED_BUGS = {
    "effect_before_saved_unpack": "a backward statement before `ctx.saved_tensors` was skipped when unpacking then "
    "raised (the carrier unpacked before bwd ran); bwd now reads them where the original did",
    "late_dirty": "ctx.mark_dirty after an early return was replayed on every path (now INL107; d718310)",
    "late_materialize": "set_materialize_grads(False) after an early return was replayed on every path (now INL108; d718310)",
    "amp_keywords": "custom_fwd hides forward's names from apply's keyword binding in the original only (6fb3640)",
    "setup_refusal_crash": "a refusal inside a setup_context class crashed the engine with KeyError (d718310)",
    "one_path_attr_alias": "an attribute set on one path to a name also used by another residual passed INL103 (d718310)",
    "saved_unread": "the carrier unpacked ctx.saved_tensors even when backward never read it (8c34f0b)",
    "pair_attr": "tensors inside tuple ctx attributes were not re-bound per torch.func level (8c34f0b)",
    "save_returned_input": "under torch.func, saving an input that forward returns as-is raised in the setup_context "
    "carrier (now saved as the output)",
}
AVOIDABLE = {**KNOWN_BUGS, **FIXED_BUGS}


def generate(ch: Chooser, avoid: frozenset[str] = frozenset()) -> Generated:
    features: set[str] = set()
    builder = FunctionBuilder(ch, ch.choice(["F", "MyFn", "ScaledOp", "Op"]), features, avoid)
    class_src, info = builder.build()
    name = builder.name
    order: list[Param] = info["order"]
    tensors: list[Param] = info["tensors"]
    shape = info["shape"]
    once = builder.once

    imports = ["import torch"]
    if info["helpers"]:
        imports.insert(0, "import functools")
    if builder.jvp:
        imports.append("import torch.autograd.forward_ad as fwAD")
    if once:
        imports.append("from torch.autograd.function import once_differentiable")
    out = _Lines()
    out.lines.extend(imports)
    out.add(0, "")
    out.add(0, "")
    for helper in info["helpers"]:
        out.lines.extend(DECORATOR_HELPERS[helper].rstrip("\n").split("\n"))
        out.add(0, "")
        out.add(0, "")

    for source in builder.helpers.values():
        out.lines.extend(source.rstrip("\n").split("\n"))
        out.add(0, "")
        out.add(0, "")

    route = ch.choice(["apply", "apply", "alias", "module", "factory"])
    features.add(f"route_{route}")
    if route == "factory":
        out.add(0, "def make_fn(power):")
        for line in class_src.rstrip("\n").split("\n"):
            out.add(0, ("    " + line) if line else "")
        out.add(0, "")
        out.add(1, f"return {name}.apply")
        call = "make_fn(2.0)"
        # the closure variable is used by nothing else: keep the backward as generated
    else:
        out.lines.extend(class_src.rstrip("\n").split("\n"))
        call = f"{name}.apply"
        if route == "apply" and ch.bool(8):
            call = f"{name}().apply"  # apply reached through an instance
            features.add("route_instance")
    out.add(0, "")
    out.add(0, "")
    if route == "alias":
        out.add(0, f"{name.lower()}_fn = {name}.apply")
        call = f"{name.lower()}_fn"
        out.add(0, "")
        out.add(0, "")
    elif route == "module":
        out.add(0, "class Mod(torch.nn.Module):")
        out.add(1, "def __init__(self):")
        out.add(2, "super().__init__()")
        out.add(2, f"self.fn = {name}.apply")
        out.add(0, "")
        out.add(1, "def forward(self, *args, **kwargs):")
        out.add(2, "return self.fn(*args, **kwargs)")
        out.add(0, "")
        out.add(0, "")
        call = "Mod()"
    out.lines.extend(HELPERS.rstrip("\n").split("\n"))
    out.add(0, "")
    out.add(0, "")

    values = {p.name: ch.choice(NONTENSOR_VALUES[p.kind]) for p in order if not p.tensor}
    flag = info["flag"]
    dirty = info["dirty"]

    def call_text(args: dict[str, str], *, keywords: bool, omit_defaults: bool, flag_value: str | None = None) -> str:
        parts = []
        use_kw = False
        for p in order:
            value = args[p.name] if p.tensor else values[p.name]
            if flag is not None and p is flag and flag_value is not None:
                value = flag_value
            if omit_defaults and p.default is not None:
                use_kw = True  # later ones must be keywords
                continue
            if (keywords and not p.tensor) or use_kw:
                use_kw = True
                parts.append(f"{p.name}={value}")
            else:
                parts.append(value)
        return f"{call}({', '.join(parts)})"

    shape_text = repr(shape)

    def make_inputs(lines: _Lines, requires: dict[str, bool], copy: bool) -> tuple[list[str], dict[str, str]]:
        leaves = []
        args = {}
        for p in tensors:
            rg = requires[p.name]
            lines.add(1, f"{p.name}_leaf = torch.randn({shape_text}{', requires_grad=True' if rg else ''})")
            if rg:
                leaves.append(f"{p.name}_leaf")
            if (p.name == dirty and rg) or copy:
                lines.add(1, f"{p.name}_arg = {p.name}_leaf {'.clone()' if p.name == dirty else '* 1'}")
                args[p.name] = f"{p.name}_arg"
            else:
                args[p.name] = f"{p.name}_leaf"
        return leaves, args

    all_rg = {p.name: True for p in tensors}
    scen = _Lines()

    def scenario(
        title: str, requires=None, copy=False, keywords=False, omit=False, flag_value=None, kind="plain"
    ) -> None:
        scen.add(0, f"def scenario_{title}():")
        leaves, args = make_inputs(scen, requires or all_rg, copy)
        arg_list = "(" + ", ".join(args[p.name] for p in tensors) + ("," if len(tensors) == 1 else "") + ")"
        text = call_text(args, keywords=keywords, omit_defaults=omit, flag_value=flag_value)
        leaves_text = "[" + ", ".join(leaves) + "]"
        if kind == "plain":
            scen.add(1, f"out = {text}")
            scen.add(1, f"return {leaves_text}, (out, _rel(out, {arg_list}))")
        elif kind == "no_grad":
            scen.add(1, "with torch.no_grad():")
            scen.add(2, f"out = {text}")
            scen.add(1, f"return {leaves_text}, (out, _rel(out, {arg_list}))")
        elif kind == "version":
            scen.add(1, f"out = {text}")
            target = ch.choice([p.name for p in tensors])
            scen.add(1, f"{args[target]}.add_(1.0)")
            if ch.bool(30):
                scen.add(1, "first = out[0] if isinstance(out, tuple) else out")
                scen.add(1, "if isinstance(first, torch.Tensor) and first.is_floating_point():")
                scen.add(2, "first.mul_(2.0)")
            scen.add(1, f"return {leaves_text}, out")
        elif kind == "double":
            scen.add(1, f"out = {text}")
            scen.add(
                1, f"grads = torch.autograd.grad(_total(out), {leaves_text}, create_graph=True, allow_unused=True)"
            )
            scen.add(1, f"return {leaves_text}, grads")
        elif kind == "version_nograd":
            # an input that needs no gradient changes after the call: only a read of it fails
            scen.add(1, f"out = {text}")
            target = ch.choice([p.name for p in tensors if not (requires or all_rg)[p.name]])
            scen.add(1, f"{args[target]}.add_(1.0)")
            scen.add(1, f"return {leaves_text}, out")
        elif kind == "twice":
            scen.add(1, f"out = {text}")
            scen.add(1, f"torch.autograd.grad(_total(out), {leaves_text}, allow_unused=True)")
            # every call through a counting decorator so far, in order (same scenarios, same order)
            scen.add(
                1, f"return {leaves_text}, (out, list(CALLS))" if info["counted"] else f"return {leaves_text}, out"
            )
        elif kind == "retain_twice":
            # what the first backward wrote on ctx is what the harness's second one reads
            scen.add(1, f"out = {text}")
            scen.add(
                1, f"first = torch.autograd.grad(_total(out), {leaves_text}, retain_graph=True, allow_unused=True)"
            )
            scen.add(1, f"return {leaves_text}, (out, first)")
        elif kind == "subset":
            scen.add(1, f"out = {text}")
            scen.add(1, f"return {leaves_text}, out[0] if isinstance(out, tuple) else out")
        elif kind == "autocast":
            scen.add(1, 'with torch.autocast("cpu", dtype=torch.bfloat16):')
            scen.add(2, f"out = {text}")
            scen.add(1, f"return {leaves_text}, out")
        elif kind == "forward_ad":
            duals = {p.name: f"fwAD.make_dual({p.name}_p, torch.randn({shape_text}))" for p in tensors}
            for p in tensors:
                scen.add(1, f"{p.name}_p = torch.randn({shape_text})")
            scen.add(1, "with fwAD.dual_level():")
            scen.add(2, f"out = {call_text(duals, keywords=keywords, omit_defaults=omit, flag_value=flag_value)}")
            scen.add(2, "outs = out if isinstance(out, tuple) else (out,)")
            scen.add(2, "return [], tuple(fwAD.unpack_dual(o).tangent.clone() for o in outs)")
        scen.add(0, "")
        scen.add(0, "")

    flag_values = ["True", "False"] if flag is not None else [None]
    for fv in flag_values:
        suffix = "" if fv is None else f"_{fv.lower()}"
        scenario(f"basic{suffix}", flag_value=fv)
        scenario(f"double{suffix}", kind="double", flag_value=fv)
    if any(p.default is not None for p in order):
        scenario("omit_defaults", omit=True)
    if any(not p.tensor for p in order) and not (info["amp"] and "amp_keywords" in avoid):
        scenario("keywords", keywords=True)
    partial = {p.name: ch.bool(50) for p in tensors}
    if all(partial.values()):
        partial[tensors[0].name] = False
    scenario("partial_grad", requires=partial)
    scenario("version", copy=True, kind="version")
    scenario("twice", kind="twice")
    if dirty is None:
        scenario("partial_version", requires=partial, kind="version_nograd")
        scenario("partial_twice", requires=partial, kind="twice")
    if builder.bwd_writes:
        for fv in flag_values:
            scenario(f"retain_twice{'' if fv is None else '_' + fv.lower()}", kind="retain_twice", flag_value=fv)
    scenario("no_grad", kind="no_grad")
    if info["n_out"] > 1:
        scenario("subset", kind="subset")
    if info["amp"]:
        scenario("autocast", kind="autocast")
    if builder.jvp:
        for fv in flag_values:
            scenario(f"forward_ad{'' if fv is None else '_' + fv.lower()}", kind="forward_ad", flag_value=fv)

    # probes for torch.func: float outputs only, fixed non-tensor args
    probes = []
    # marked outputs are left out: torch.func hands their cotangents to backward where eager
    # autograd gives None / zeros, a difference of torch.func, not of the rewrite
    float_positions = [j for j, k in enumerate(info["out_kinds"]) if k in ("expr", "input", "dirty")]
    # A backward that writes ctx runs twice on one ctx in eager double backward (the second
    # order goes through the node again) but once per level under torch.func, each level
    # with its own ctx: torch's own semantics, a setup_context original differs the same way.
    second_order = not once and not builder.bwd_writes
    if float_positions:
        params = [f"p_{p.name}" for p in tensors]
        args = {p.name: (f"p_{p.name}.clone()" if p.name == dirty else f"p_{p.name}") for p in tensors}
        scen.add(0, f"def probe_0({', '.join(params)}):")
        scen.add(1, f"out = {call_text(args, keywords=False, omit_defaults=False, flag_value=flag_values[0])}")
        scen.add(1, "outs = out if isinstance(out, tuple) else (out,)")
        scen.add(1, f"return tuple(outs[j] for j in {tuple(float_positions)!r})")
        scen.add(0, "")
        scen.add(0, "")
        probes.append(
            Probe(
                "probe_0",
                len(tensors),
                shape,
                second_order=second_order and not builder.bwd_no_grad,
                func_ok=dirty is None,
            )
        )

    if float_positions and dirty is None:
        probes += keyword_probes(ch, scen, call, order, values, flag, flag_values[0], float_positions, builder)

    source = out.text() + "\n\n" + scen.text().rstrip("\n") + "\n"
    # drawn last, so recorded draws of older generators replay with these shapes off
    source, classes = kept_class_shapes(ch, source, name, route, builder, features)
    source, compile_kinds, added = add_compile_features(ch, source, name, tensors[0].name, features, avoid)
    source = rebind_through_with(ch, source, features)
    source = plain_backward(ch, source, features)
    source = save_behind_truth_test(ch, source, features)
    source, flows = add_flow_function(ch, source, features)
    return Generated(
        source=source,
        classes=[*classes, *added, *flows],
        probes=probes,
        features=features,
        draws=list(getattr(ch, "record", [])),
        compile_kinds=compile_kinds,
    )


_REBIND = re.compile(r"^(?P<indent>[ ]+)(?P<name>\w+) = (?P=name) \* 3\.0 \+ 1\.0$", re.M)


def rebind_through_with(ch: Chooser, source: str, features: set[str]) -> str:
    """Some rebindings made by ``with ... as (name, _)`` instead of an assignment: a
    binding the engine once missed, returning a saved name's later value (drawn last)."""
    if not _REBIND.search(source) or not ch.bool(30):
        return source
    features.add("rebind_with")

    def through_with(match: re.Match) -> str:
        indent, name = match["indent"], match["name"]
        value = f"({name} * 3.0 + 1.0, None)"
        return f"{indent}with contextlib.nullcontext({value}) as ({name}, _rebound):\n{indent}    pass"

    return "import contextlib\n" + _REBIND.sub(through_with, source)


_STATIC_BACKWARD = re.compile(r"^(?P<indent>[ ]+)@staticmethod\n(?P=indent)(?=def (?:backward|vjp)\()", re.M)


def plain_backward(ch: Chooser, source: str, features: set[str]) -> str:
    """Sometimes a backward with no other decorator lacks ``@staticmethod``, as real code
    forgets it: torch calls it through the class, ctx first (drawn last)."""
    if not _STATIC_BACKWARD.search(source) or not ch.bool(15):
        return source
    features.add("plain_backward")
    return _STATIC_BACKWARD.sub(lambda match: match["indent"], source)


_SAVE = re.compile(r"^(?P<indent>[ ]+)(?P<ctx>\w+)\.save_for_backward\((?P<args>[^\n]*)\)$", re.M)


def save_behind_truth_test(ch: Chooser, source: str, features: set[str]) -> str:
    """Sometimes the saves sit behind ``if ctx:``, as code written to also run as
    ``F.forward(None, ...)`` has them: always true under apply (drawn last)."""
    if not _SAVE.search(source) or not ch.bool(15):
        return source
    features.add("ctx_truth_test")

    def guarded(match: re.Match) -> str:
        indent, ctx = match["indent"], match["ctx"]
        return f"{indent}if {ctx}:\n{indent}    {ctx}.save_for_backward({match['args']})"

    return _SAVE.sub(guarded, source)


def kept_class_shapes(
    ch: Chooser, source: str, name: str, route: str, builder: FunctionBuilder, features: set[str]
) -> tuple[str, list[str]]:
    """Uses of the Function as a class, which the rewrite answers with a kept class:
    a class attribute and a helper read in forward and backward (the helper scales the
    gradient, so a rewrite that loses it is caught), backward as a classmethod reaching
    them through ``cls``, an ONNX ``symbolic``, a registry class decorator, the class
    stored in a dict and applied from there, and a subclass (same module) overriding the
    attribute that all calls then go through."""
    classes = [name]
    if not ch.bool(30):
        return source, classes
    features.add("kept_class")
    lines = source.split("\n")
    start = next(
        i for i, line in enumerate(lines) if line.lstrip().startswith(f"class {name}(torch.autograd.Function)")
    )
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    member, body = indent + "    ", indent + "        "
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i].startswith(member))

    def find(prefix: str, lo: int, hi: int) -> int:
        return next(i for i in range(lo, hi) if lines[i].startswith(prefix))

    backward = next(
        i for i in range(start, end) if lines[i].startswith((member + "def backward(", member + "def vjp("))
    )
    gsum = find(body + "gsum = ", backward, end)
    expression = lines[gsum][len(body + "gsum = ") :]
    # backward's own decorators (replayed ones included) sit between @staticmethod and its def
    static = max(i for i in range(start, backward) if lines[i].startswith(member + "@staticmethod"))
    decorators = range(static, backward)
    as_classmethod = not builder.amp_bwd and ch.bool(50)
    if as_classmethod:
        features.add("kept_classmethod_backward")
        lines[decorators[0]] = member + "@classmethod"
        lines[backward] = lines[backward].replace("(", "(cls, ", 1)
        lines[gsum] = f"{body}gsum = cls._bump({expression}) + cls.scale_k"
    else:
        lines[gsum] = f"{body}gsum = {name}._bump({expression})"
    forward = next(i for i in range(start, end) if lines[i].startswith(member + "def forward("))
    lines.insert(forward + 1, f"{body}_k = {name}.scale_k")
    end += 1
    members = [f"{member}scale_k = {ch.choice(['2.0', '0.5', '3.0'])}", ""]
    members += [f"{member}@staticmethod", f"{member}def _bump(t):", f"{body}return t * {name}.scale_k", ""]
    if ch.bool(30):
        features.add("kept_symbolic")
        members += [f"{member}@staticmethod", f"{member}def symbolic(g, *args):", f"{body}return args[0]", ""]
    lines[start + 1 : start + 1] = members
    end += len(members)
    after: list[str] = []
    target = name
    if route != "factory" and ch.bool(30):
        features.add("kept_subclass")
        target = f"{name}Sub"
        classes.append(target)
        after += [f"class {target}({name}):", "    scale_k = 4.0", "", ""]
    if route == "apply" and ch.bool(40):
        features.add("kept_stored")
        after += [f'STORED = {{"fn": {target}}}', "", ""]
        target = 'STORED["fn"]'
    lines[end:end] = after
    for i in range(end + len(after), len(lines)):
        lines[i] = lines[i].replace(f"{name}.apply", f"{target}.apply").replace(f"{name}().apply", f"{target}.apply")
    # a decorated class whose backward uses cls is refused (the decorator may rebind the name): rarer
    if route != "factory" and ch.bool(10 if as_classmethod else 30):
        features.add("kept_decorator")
        registry = [
            "_REGISTERED = []",
            "",
            "",
            "def _register(cls):",
            "    _REGISTERED.append(cls.__name__)",
            "    return cls",
            "",
            "",
        ]
        lines[start:start] = [*registry, "@_register"]
    return "\n".join(lines), classes


def keyword_probes(
    ch: Chooser,
    lines: _Lines,
    call: str,
    order: list[Param],
    values: dict[str, str],
    flag: Param | None,
    flag_value: str | None,
    float_positions: list[int],
    builder: FunctionBuilder,
) -> list[Probe]:
    """``probe_kw_<i>``: the Function called with keywords, for the oracle to run under torch.func.

    Each probe passes the parameters from a random point on as keywords (tensors too), in
    a random order, and may leave defaulted ones out (a trailing run, or one before a
    keyword: a gap, which the combined style rejects and setup_context fills), pass the
    keyword-only parameter (which eager's apply rejects), or an unknown name. The oracle
    compares torch.func on the rewrite with eager autograd of the original, or, where the
    original raises, the error (``Probe.errors_match``).
    """
    features = builder.features
    probes: list[Probe] = []
    if builder.amp and "amp_keywords" in builder.avoid:
        return probes
    tensors = [p for p in order if p.tensor]

    def value_of(p: Param) -> str:
        if p.tensor:
            return f"p_{p.name}"
        if p is flag and flag_value is not None:
            return flag_value
        return values[p.name]

    for i in range(ch.draw(3)):
        split = ch.draw(len(order) + 1)
        positional = order[:split]
        keywords = ch.sample(order[split:], len(order) - split)  # shuffled
        defaulted = [p.name for p in order[split:] if p.default is not None]  # a trailing run
        omitted: set[str] = set()
        if defaulted and ch.bool(50):
            omitted.update(defaulted[ch.draw(len(defaulted)) :])
            features.add("kw_probe_omit")
        if defaulted and ch.bool(10):
            omitted.add(ch.choice(defaulted))  # maybe a gap before a later keyword
            features.add("kw_probe_gap")
        parts = [value_of(p) for p in positional]
        parts += [f"{p.name}={value_of(p)}" for p in keywords if p.name not in omitted]
        if builder.kwonly and ch.bool(40):
            parts.append(f"bias_scale={ch.choice(['0.5', '2.0'])}")
            features.add("kw_probe_kwonly")
        if ch.bool(5):
            parts.append("bogus=1.0")
            features.add("kw_probe_unknown")
        if any(p.tensor for p in keywords):
            features.add("kw_probe_tensor_keyword")
        features.add("kw_probe")
        name = f"probe_kw_{i}"
        lines.add(0, f"def {name}({', '.join(f'p_{p.name}' for p in tensors)}):")
        lines.add(1, f"out = {call}({', '.join(parts)})")
        lines.add(1, "outs = out if isinstance(out, tuple) else (out,)")
        lines.add(1, f"return tuple(outs[j] for j in {tuple(float_positions)!r})")
        lines.add(0, "")
        lines.add(0, "")
        second_order = not builder.once and not builder.bwd_writes and not builder.bwd_no_grad  # see generate()
        probes.append(Probe(name, len(tensors), builder.shape, second_order=second_order, errors_match=True))
    return probes


def generate_from_seed(seed: int, avoid: frozenset[str] = frozenset()) -> Generated:
    return generate(RandomChooser(seed), avoid)


def generate_from_draws(draws: Sequence[int], avoid: frozenset[str] = frozenset()) -> Generated:
    return generate(ReplayChooser(draws), avoid)
