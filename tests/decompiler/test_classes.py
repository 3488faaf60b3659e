"""``unveil.decompile(cls)``: the ``class`` statement as written, from the code of the module
that defines it; rebuilt from the live class, saying so, where that code is not at hand."""
# pyodide-compatible

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import unveil

from . import class_forms


def _run_in_module(source: str, module: Any) -> dict[str, Any]:
    """Execute ``source`` in a copy of ``module``'s namespace."""
    namespace = dict(vars(module))
    exec(compile(source, "<decompiled>", "exec", dont_inherit=True), namespace)
    return namespace


def test_metaclass_keywords_decorators_and_body_as_written() -> None:
    text = unveil.decompile(class_forms.WithMeta)
    assert text.startswith("@deco\nclass WithMeta(dict, metaclass=Meta, flag=3):"), text
    again = _run_in_module(text, class_forms)["WithMeta"]
    original = class_forms.WithMeta
    assert type(again) is type(original)
    assert (again.kw, again.made_by, again.decorated) == (original.kw, "Meta", True)
    assert (again.x, again.y, again.__doc__) == (original.x, original.y, original.__doc__)
    assert again.__annotations__ == original.__annotations__
    assert again().m(1) == original().m(1)


def test_dataclass_and_enum_come_back_as_the_statements_that_made_them() -> None:
    ns = _run_in_module(unveil.decompile(class_forms.Point), class_forms)
    p, q = ns["Point"](1, -2), class_forms.Point(1, -2)
    assert (p.norm(), repr(p)) == (q.norm(), repr(q))
    with pytest.raises(AttributeError):  # (frozen)
        p.x = 3  # type: ignore[misc]
    ns = _run_in_module(unveil.decompile(class_forms.Colour), class_forms)
    assert [(c.name, c.value, c.lower) for c in ns["Colour"]] == \
        [(c.name, c.value, c.lower) for c in class_forms.Colour]


def test_nested_and_local_classes() -> None:
    assert unveil.decompile(class_forms.Base.Inner) == "class Inner:\n    z = 3\n"
    assert unveil.decompile(class_forms.factory(2)) == "class Local:\n    k = n\n"
    text = unveil.decompile(class_forms.Base)
    assert "@abc.abstractmethod" in text and "class Inner:" in text, text


def _module_from(tmp_path: Path, name: str, source: str) -> Any:
    (tmp_path / f"{name}.py").write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695")
def test_type_parameters(tmp_path: Path) -> None:
    module = _module_from(tmp_path, "generic_module", "class Generic[T, *Ts, **P]:\n"
                          "    def first(self, x: T) -> T:\n        return x\n")
    try:
        text = unveil.decompile(module.Generic)
    finally:
        sys.modules.pop("generic_module")
    assert text.startswith("class Generic[T, *Ts, **P]:"), text
    again = _run_in_module(text, module)["Generic"]
    assert [p.__name__ for p in again.__type_params__] == ["T", "Ts", "P"]
    assert again().first(5) == 5


def test_without_source_the_class_is_rebuilt_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "edited_module.py"
    module = _module_from(tmp_path, "edited_module",
                          "class K(dict):\n    a = 1\n    def f(self):\n        return self.a\n")
    try:
        as_written = unveil.decompile(module.K)
        assert as_written == textwrap.dedent("""\
            class K(dict):
                a = 1

                def f(self):
                    return self.a
            """)
        path.write_text("class K(dict):\n    a = 1\n    def f(self):\n        return 2\n")
        rebuilt = unveil.decompile(module.K)
    finally:
        sys.modules.pop("edited_module", None)
    assert rebuilt.startswith("# rebuilt from the live class"), rebuilt
    again = _run_in_module(rebuilt, module)["K"]
    assert again().f() == module.K().f() == 1
    namespace: dict[str, Any] = {}
    exec("class Made:\n    b = 2\n", namespace)
    assert unveil.decompile(namespace["Made"]).startswith("# rebuilt from the live class")


PRIVATE_NAMES = '''
class Account:
    __slots__ = ("__balance", "log")

    def __init__(self, balance, __note="n"):
        self.__balance = balance
        self.log = [__note]

    def __check(self, amount):
        if amount > self.__balance:
            raise ValueError(f"only {self.__balance}")
        return amount

    class __Entry:
        def __init__(self, amount):
            self.__amount = amount

        def value(self):
            return self.__amount

    def withdraw(self, amount):
        self.__balance -= self.__check(amount)
        return self.__Entry(amount).value(), self.__balance


class _Savings(Account):
    __rate = 2

    def interest(self):
        return self._Account__balance * self.__rate


def run(balance, amount):
    a = _Savings(balance)
    try:
        return a.withdraw(amount), a.interest(), a.log
    except ValueError as e:
        return str(e)
'''


def test_private_names_come_back_as_written() -> None:
    """``__x`` in a class is stored as ``_Class__x``: the text spells it ``__x`` again,
    and a private method keeps its own name (``co_name``, tracebacks)."""
    code = compile(PRIVATE_NAMES, "<private>", "exec", dont_inherit=True)
    text = unveil.decompile(code)
    for mangled in ("_Account__check", "_Account__balance =", "_Entry__amount", "_f0"):
        assert mangled not in text, text
    original: dict[str, Any] = {}
    again: dict[str, Any] = {}
    exec(code, original)
    exec(compile(text, "<decompiled>", "exec", dont_inherit=True), again)
    for args in ((10, 3), (2, 5), (7, 7)):
        assert again["run"](*args) == original["run"](*args)
    method = again["Account"]._Account__check
    assert (method.__code__.co_name, method.__qualname__) == ("__check", "Account.__check")
    assert again["_Savings"]._Savings__rate == 2
    from unveil.codeobj import iter_code_objects
    from unveil.verify.batch import check_code

    for qualname, c in iter_code_objects(code):
        if qualname in ("<module>", "Account", "Account.__check", "_Savings"):
            assert check_code(c, qualname=qualname).status == "identical", qualname


def test_nested_classes_round_trip_alone() -> None:
    """A class body checked on its own (``unveil check``, the stdlib benchmark) stores the
    same ``__qualname__``: it is recompiled inside classes and functions of its path."""
    from unveil.codeobj import code_kind, iter_code_objects
    from unveil.verify.batch import check_code

    source = ("class Outer:\n    class Inner:\n        class Deep:\n            x = 1\n"
              "    def method(self, v):\n        class Local:\n            y = v\n"
              "        return Local\n"
              "def factory(k):\n    class Made:\n        def get(self):\n"
              "            return k\n    return Made\n")
    code = compile(source, "<nested>", "exec", dont_inherit=True)
    classes = {q: c for q, c in iter_code_objects(code) if code_kind(c) == "class"}
    assert len(classes) == 5
    statuses = {q: check_code(c, qualname=q).status for q, c in classes.items()}
    assert set(statuses.values()) == {"identical"}, statuses


class _Sequence:
    def count(self, value):
        class Found:
            def where(self):
                return [x for x in ()]

        return sum(1 for x in self.items if x is value), Found, lambda: value


def test_recompiled_method_names_its_nested_code_as_before() -> None:
    # recompiled on its own, inside a wrapper, a method's nested functions and classes
    # still have the ``__qualname__`` they had (3.10 keeps it in a constant)
    import types

    code = unveil.recompile(_Sequence.count)
    func = types.FunctionType(code, globals())
    obj = _Sequence()
    obj.items = [1]
    _, found, get = _Sequence.count(obj, 1)
    _, found2, get2 = func(obj, 1)
    assert found2.__qualname__ == found.__qualname__ == "_Sequence.count.<locals>.Found"
    assert found2.where.__qualname__ == found.where.__qualname__
    assert get2.__qualname__ == get.__qualname__
    assert func(obj, 1)[0] == 1


def test_a_method_keeps_its_own_store_of_a_name_the_class_statement_writes() -> None:
    """The class body's own ``__static_attributes__`` store (3.13) is the compiler's and
    goes; a method's local of that name is the method's and stays."""
    source = ("class C:\n"
              "    def f(self):\n"
              "        __static_attributes__ = 1\n"
              "        return __static_attributes__ + 1\n"
              "    def g(self):\n"
              "        self.a = 2\n"
              "        return self.a\n")
    original: dict[str, Any] = {}
    exec(compile(source, "<original>", "exec", dont_inherit=True), original)
    text = unveil.decompile(compile(source, "<original>", "exec", dont_inherit=True))
    again: dict[str, Any] = {}
    exec(compile(text, "<decompiled>", "exec", dont_inherit=True), again)
    for ns in (original, again):
        c = ns["C"]()
        assert (c.f(), c.g()) == (2, 2), text
    assert getattr(again["C"], "__static_attributes__", None) \
        == getattr(original["C"], "__static_attributes__", None)
