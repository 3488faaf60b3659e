"""unveil.recompiles: Dynamo's recompile reasons (as PyTorch 2.13-2.15 print them) read
into what changed, where, then and now, and the fix (no torch)."""
# pyodide-compatible

from __future__ import annotations

import pytest

from unveil.recompiles import Kind, explain, explained, fix, read_value, words

SHAPE = "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3"
DTYPE = "1/0: tensor 'x' dtype mismatch. expected Float, actual Double"
GRAD = "0/2: tensor 'x' requires_grad mismatch. expected requires_grad=0"
FLAG = ("1/0: G['SCALE'] == 1.0                                             # return x * SCALE"
        " + 1  # t/rc/prog.py:19 in f\nUser stack trace:\n  File \"/tmp/t/rc/prog.py\", "
        "line 19, in f\n    return x * SCALE + 1")
ATTRIBUTE = "0/0: self.use_relu == True                  # if self.use_relu:  # a/prog2.py:12 in forward"
TYPE = "2/0: ___check_type_id(L['n'], 9461248), type=<class 'int'>"
LENGTH = "3/1: len(L['xs']) == 3"


@pytest.mark.parametrize(("reason", "kind", "source", "scope", "old", "new"), [
    (SHAPE, Kind.SIZE, "x", "argument", "2", "3"),
    (DTYPE, Kind.DTYPE, "x", "argument", "torch.float32", "torch.float64"),
    (GRAD, Kind.REQUIRES_GRAD, "x", "argument", "False", "True"),
    (FLAG, Kind.VALUE, "SCALE", "global", "1.0", None),
    (ATTRIBUTE, Kind.VALUE, "self.use_relu", "attribute", "True", None),
    (TYPE, Kind.TYPE, "n", "argument", "int", None),
    (LENGTH, Kind.LENGTH, "xs", "global", "3", None),
])
def test_each_kind_is_read(reason: str, kind: Kind, source: str, scope: str,
                           old: str | None, new: str | None) -> None:
    cause = explain(reason, ("self", "x", "n"))
    assert cause is not None
    assert (cause.kind, cause.source, cause.scope, cause.old, cause.new) == (
        kind, source, scope, old, new)
    assert cause.guard_of == reason.split(":")[0]
    assert fix(cause) and "see Dynamo's guard" not in fix(cause)


def test_the_user_line_is_kept_with_its_code() -> None:
    cause = explain(FLAG)
    assert cause is not None and cause.line == "prog.py:19 (`return x * SCALE + 1`)"
    assert explain(SHAPE).line is None  # type: ignore[union-attr]


def test_words_say_what_changed_then_and_now() -> None:
    cause = explain(SHAPE, ("x",))
    assert cause is not None
    assert words(cause, "forward", "m.py:10") == \
        "`x` (argument of forward, m.py:10): its size 0 was 2, now 3"
    assert "torch._dynamo.mark_dynamic(x, 0)" in fix(cause)
    flag = explained([FLAG], ("x",), "f", "prog.py:18", lambda source: "2.0")[0]
    assert flag["words"] == ("the global `SCALE`, read at prog.py:19 (`return x * SCALE "
                             "+ 1`): it was 1.0, now 2.0")
    assert flag["kind"] == "value" and "global SCALE" in str(flag["fix"])


def test_what_is_not_a_reason_or_not_known() -> None:
    assert explain("") is None and explain("no compile id here") is None
    other = explain("0/0: ___check_global_state()")
    assert other is not None and other.kind is Kind.OTHER
    assert "Dynamo's check `___check_global_state()` failed" in words(other)


def test_read_value_reads_names_attributes_and_constant_items_only() -> None:
    class Box:
        flag = True
    local = {"self": Box(), "xs": [4, 5]}
    assert read_value("self.flag", local, {}) is True
    assert read_value("xs[1]", local, {}) == 5
    assert read_value("SCALE", local, {"SCALE": 2.0}) == 2.0
    for source in ("f()", "self.missing", "xs[7]", "nope", "1 +"):
        with pytest.raises(LookupError):
            read_value(source, local, {"f": print})
