"""A Function class meant as a base stays a Function (INL113), with its same-module subclasses.

Each sign of a base is refused at the text that shows it; each near miss (a backward that
raises NotImplementedError, a classmethod reading what its class defines) is still flattened;
and the classes the surfaces name as subclassed elsewhere stay too, by qualified name.
"""

from __future__ import annotations

import pytest

from inliner import flatten
from inliner.engine.codes import Code

HEAD = "import abc\nfrom abc import ABC, abstractmethod\n\nimport torch\nfrom torch.autograd import Function\n\n\n"

FORWARD = "    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n\n"
BACKWARD = "    @staticmethod\n    def backward(ctx, g):\n        return g * 3\n"


def _class(members: str, *, bases: str = "Function") -> str:
    return HEAD + f"class F({bases}):\n" + members


#: name -> (module, the text the diagnostic points at, what its message says)
MEANT_AS_BASE = {
    "a staticmethod forward taking cls": (
        _class(
            "    @staticmethod\n    def forward(cls, ctx, x):\n        return cls.hook(x)\n\n" + BACKWARD,
        ),
        "cls",
        "its `forward` takes `cls`",
    ),
    "cls among forward's keyword-only parameters": (
        _class("    @staticmethod\n    def forward(ctx, x, *, cls=None):\n        return x\n\n" + BACKWARD),
        "cls",
        "its `forward` takes `cls`",
    ),
    "an abstract hook": (
        _class("    @abstractmethod\n    def hook(x):\n        pass\n\n" + FORWARD + BACKWARD),
        "abstractmethod",
        "its member `hook` is abstract (`@abstractmethod`)",
    ),
    "an abstract hook spelled abc.abstractmethod": (
        _class("    @abc.abstractmethod\n    def hook(x):\n        pass\n\n" + FORWARD + BACKWARD),
        "abc.abstractmethod",
        "its member `hook` is abstract (`@abc.abstractmethod`)",
    ),
    "a hook that only raises NotImplementedError": (
        _class(
            '    def hook(x):\n        """Define me."""\n        raise NotImplementedError()\n\n' + FORWARD + BACKWARD
        ),
        "raise NotImplementedError()",
        "its member `hook` only raises NotImplementedError",
    ),
    "a forward that only raises NotImplementedError": (
        _class("    @staticmethod\n    def forward(ctx, x):\n        raise NotImplementedError\n\n" + BACKWARD),
        "raise NotImplementedError",
        "its member `forward` only raises NotImplementedError",
    ),
    "a hook reached through cls that the class does not define": (
        _class("    @classmethod\n    def forward(cls, ctx, x):\n        return cls.transform(x)\n\n" + BACKWARD),
        "cls.transform",
        "its `forward` reaches `cls.transform`, which it does not define",
    ),
    "an ABC base": (
        _class(FORWARD + BACKWARD, bases="Function, ABC"),
        "ABC",
        "it derives from `ABC`",
    ),
}


@pytest.mark.parametrize("name", list(MEANT_AS_BASE))
def test_a_class_meant_as_a_base_stays_a_function(name: str) -> None:
    source, pointed, says = MEANT_AS_BASE[name]
    result = flatten(source, path="m.py")
    assert result.source == source and result.refused == ("F",), result.diagnostics
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == Code.MEANT_AS_BASE and diagnostic.name == "F"
    assert diagnostic.message.startswith(f"class F: it is meant as a base: {says}"), diagnostic.message
    assert "stays a torch.autograd.Function" in diagnostic.message
    line = source.splitlines()[diagnostic.line - 1]
    assert diagnostic.end_line == diagnostic.line
    assert line[diagnostic.column - 1 : diagnostic.end_column - 1] == pointed


#: name -> a module whose class F is flattened as before
NOT_A_BASE = {
    "a backward that only raises NotImplementedError": _class(
        FORWARD + "    @staticmethod\n    def backward(ctx, g):\n        raise NotImplementedError('no grad')\n"
    ),
    "a jvp that only raises NotImplementedError": _class(
        FORWARD + BACKWARD + "\n    @staticmethod\n    def jvp(ctx, t):\n        raise NotImplementedError\n"
    ),
    "a helper that raises NotImplementedError on one branch": _class(
        "    @staticmethod\n    def helper(x):\n        if x is None:\n            raise NotImplementedError\n"
        "        return x\n\n" + FORWARD + BACKWARD
    ),
    "classmethods reaching what the class defines": _class(
        "    scale = 2.0\n\n    @classmethod\n    def forward(cls, ctx, x):\n        return x * cls.scale\n\n"
        "    @classmethod\n    def backward(cls, ctx, g):\n        return g * cls.scale * cls.__name__.count('F')\n"
    ),
    "a classmethod reaching what the module sets on the class": _class(
        "    @classmethod\n    def forward(cls, ctx, x):\n        return x * cls.scale\n\n" + BACKWARD
    )
    + "\n\nF.scale = 2.0\n",
    "a staticmethod whose context is named klass": _class(
        "    @staticmethod\n    def forward(klass, x):\n        return x * 2\n\n" + BACKWARD
    ),
}


@pytest.mark.parametrize("name", list(NOT_A_BASE))
def test_a_near_miss_is_flattened(name: str) -> None:
    result = flatten(NOT_A_BASE[name], path="m.py")
    assert result.flattened == ("F",), result.diagnostics


SUBCLASS_ABSTRACT = _class(FORWARD + BACKWARD) + (
    "\n\nclass G(F):\n    @abstractmethod\n    def hook(x):\n        pass\n\n\nclass H(G):\n"
    "    @staticmethod\n    def hook(x):\n        return x\n"
)


def test_a_subclass_meant_as_a_base_keeps_its_whole_family() -> None:
    result = flatten(SUBCLASS_ABSTRACT, path="m.py")
    assert result.source == SUBCLASS_ABSTRACT and result.flattened == ()
    codes = {d.name: d.code for d in result.diagnostics}
    assert codes == {"F": Code.USED_AS_FUNCTION, "G": Code.MEANT_AS_BASE, "H": Code.USED_AS_FUNCTION}


def test_a_hook_a_base_of_the_family_defines_is_not_abstract() -> None:
    source = _class("    @staticmethod\n    def hook(x):\n        return x\n\n" + FORWARD + BACKWARD) + (
        "\n\nclass G(F):\n    @classmethod\n    def forward(cls, ctx, x):\n        return cls.hook(x) * 2\n"
    )
    assert flatten(source, path="m.py").flattened == ("F", "G")


CONCRETE = _class(FORWARD + BACKWARD) + "\n\nclass Other(Function):\n" + FORWARD + BACKWARD


def test_a_class_subclassed_in_another_module_stays_a_function() -> None:
    subclassed = {"pkg.ops.F": "pkg.losses.Mine"}
    result = flatten(CONCRETE, path="ops.py", module="pkg.ops", subclassed=subclassed)
    assert result.flattened == ("Other",) and "class F(Function):" in result.source
    (diagnostic,) = [d for d in result.diagnostics if d.name == "F"]
    assert diagnostic.code == Code.MEANT_AS_BASE
    assert "class Mine in module pkg.losses derives from it" in diagnostic.message
    assert (diagnostic.line, diagnostic.column) == (8, 7), "at the class name"


@pytest.mark.parametrize(
    "module, subclassed",
    [("pkg.ops", {"pkg.other.F": "pkg.losses.Mine"}), (None, {"pkg.ops.F": "pkg.losses.Mine"}), ("pkg.ops", None)],
)
def test_only_the_named_class_of_the_named_module_stays(module, subclassed) -> None:
    result = flatten(CONCRETE, path="ops.py", module=module, subclassed=subclassed)
    assert result.flattened == ("F", "Other")
