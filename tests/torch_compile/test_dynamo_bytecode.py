"""unveil on the bytecode TorchDynamo writes (runs only where ``torch`` is importable).

``torch._dynamo.convert_frame.register_bytecode_hook`` calls a hook with every code
object Dynamo compiles and the transformed code it made for it; what the hook returns
(a code object, or ``None``) is what Dynamo installs. The functions below are compiled
with ``torch.compile(backend="eager")``:

* ``test_decompile_dynamo_code``: every transformed code object, and every resume
  function (Dynamo writes those itself, so they are irregular too), decompiles to text
  that compiles, and ``unveil.recompile`` keeps its name and argument layout;
* ``test_recompiled_dynamo_code_runs``: the hook returns ``unveil.recompile(new_code)``,
  so the compiled function runs unveil's code; its outputs (values, ``requires_grad``,
  printed text, raised exceptions) must equal the eager ones on several inputs.

Dynamo skips a frame whose graph break is inside a loop or a ``try`` block, so the loop
and ``try`` functions break in a helper they call: the helper's frame is compiled on its
own and runs inside the eager loop or ``try``.
"""

from __future__ import annotations

import contextlib
import io
import types
import warnings
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch._dynamo.convert_frame import register_bytecode_hook  # noqa: E402

import unveil  # noqa: E402

# --------------------------------------------------------------------------------------
# The functions.
# --------------------------------------------------------------------------------------


def plain(x, y):
    return torch.sin(x) + y * 2


def print_break(x):
    a = x + 1
    print("between graphs", a.shape)
    return a * 2


def data_dependent_if(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def item_break(x, k):
    n = x.sum().item()
    if n > k:
        return x * n, "big"
    return x - n, "small"


def _breaking_step(x, i):
    x = x * 2
    torch._dynamo.graph_break()
    return x + i


def loop_with_break(x):
    for i in range(3):
        x = _breaking_step(x, i)
    return x


def values_live_across_break(x):
    parts = [x * i for i in range(4)]
    total = x.sum()
    print("parts", len(parts))
    return torch.stack(parts).sum(0) + total, len(parts)


def no_grad_break(x):
    with torch.no_grad():
        y = x * 2
        torch._dynamo.graph_break()
        z = y + 1
    return z + x, z.requires_grad


def _checked_ratio(x, n):
    y = x + 1
    print("checking", n)
    if n < 0:
        raise ValueError("negative", n)
    return y / n


def try_except_break(x, n):
    try:
        r = _checked_ratio(x, n)
    except ZeroDivisionError:
        r = x * 0
    except ValueError as exc:
        r = x - len(exc.args)
    return r


def try_then_break(x, n):
    try:
        k = 10 // n
    except ZeroDivisionError:
        k = -1
    y = x * k
    print("k is", k)
    return y + 1, k


def _t(*values: float, grad: bool = False) -> Any:
    return torch.tensor(values, dtype=torch.float32, requires_grad=grad)


FUNCTIONS: dict[str, tuple[Callable[..., Any], list[Callable[[], tuple[Any, ...]]]]] = {
    "plain": (plain, [lambda: (_t(1, 2, 3), _t(0, 1, 0)), lambda: (_t(-1.5), _t(2))]),
    "print_break": (print_break, [lambda: (_t(1, 2),), lambda: (_t(0, 0, 5),)]),
    "data_dependent_if": (
        data_dependent_if,
        [lambda: (_t(1, 2),), lambda: (_t(-3, 1),), lambda: (_t(0),)],
    ),
    "item_break": (item_break, [lambda: (_t(1, 2), 1), lambda: (_t(1, 2), 5), lambda: (_t(-1), 0)]),
    "loop_with_break": (loop_with_break, [lambda: (_t(1, 2),), lambda: (_t(-1, 0, 4),)]),
    "values_live_across_break": (
        values_live_across_break,
        [lambda: (_t(1, 2),), lambda: (_t(3, -1, 2),)],
    ),
    "no_grad_break": (
        no_grad_break,
        [lambda: (_t(1, 2, grad=True),), lambda: (_t(3),), lambda: (_t(0, 1, grad=True),)],
    ),
    "try_except_break": (
        try_except_break,
        [lambda: (_t(1, 2), 2), lambda: (_t(1, 2), 0), lambda: (_t(1), -3), lambda: (_t(4), 4)],
    ),
    "try_then_break": (
        try_then_break,
        [lambda: (_t(1, 2), 2), lambda: (_t(1, 2), 0), lambda: (_t(3), 5)],
    ),
}


# --------------------------------------------------------------------------------------
# Running.
# --------------------------------------------------------------------------------------


def _normalize(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        t = value.detach()
        return ("tensor", t.dtype, tuple(t.shape), t.tolist(), value.requires_grad)
    if isinstance(value, BaseException):
        return ("raised", type(value).__name__, _normalize(value.args))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_normalize(v) for v in value))
    return value


def _run(func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = func(*args)
        except Exception as exc:  # noqa: BLE001 - compared
            result = exc
    return (_normalize(result), out.getvalue())


def _compiled_outcomes(
    name: str, hook: Callable[[types.CodeType, types.CodeType], types.CodeType | None]
) -> list[Any]:
    func, inputs = FUNCTIONS[name]
    torch._dynamo.reset()
    handle = register_bytecode_hook(hook)
    try:
        compiled = torch.compile(func, backend="eager")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [_run(compiled, make()) for make in inputs]
    finally:
        handle.remove()
        torch._dynamo.reset()


def _layout(code: types.CodeType) -> tuple[Any, ...]:
    n = (
        code.co_argcount
        + code.co_kwonlyargcount
        + bool(code.co_flags & 0x04)
        + bool(code.co_flags & 0x08)
    )
    return (
        code.co_name,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_varnames[:n],
        code.co_freevars,
        code.co_cellvars,
    )


def _check_code(code: types.CodeType, what: str) -> list[str]:
    """Problems with decompiling and recompiling ``code`` (empty: none)."""
    problems = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            text = unveil.decompile(code)
            if code.co_freevars:  # a closure's text compiles where its free variables live
                text = "def _scope():\n" + "".join(f"    {n} = None\n" for n in code.co_freevars) \
                    + "".join(f"    {line}\n" for line in text.splitlines())
            compile(text, f"<decompiled {code.co_name}>", "exec", dont_inherit=True)
    except Exception as exc:  # noqa: BLE001 - reported
        problems.append(f"{what} {code.co_name}: decompile: {type(exc).__name__}: {exc}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            new = unveil.recompile(code)
    except Exception as exc:  # noqa: BLE001 - reported
        problems.append(f"{what} {code.co_name}: recompile: {type(exc).__name__}: {exc}")
    else:
        if _layout(new) != _layout(code):
            problems.append(
                f"{what} {code.co_name}: recompiled layout {_layout(new)} != {_layout(code)}"
            )
    return problems


# Decompiler bugs these functions hit (strict: a fix shows up as XPASS).
_DECOMPILE_XFAIL: dict[str, str] = {}
_RUN_XFAIL: dict[str, str] = {}


def _params(known: dict[str, str]) -> list[Any]:
    return [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=known[name])] if name in known else [],
        )
        for name in FUNCTIONS
    ]


@pytest.mark.parametrize("name", _params(_DECOMPILE_XFAIL))
def test_decompile_dynamo_code(name: str) -> None:
    captured: list[tuple[types.CodeType, types.CodeType]] = []

    def hook(code: types.CodeType, new_code: types.CodeType) -> None:
        captured.append((code, new_code))

    _compiled_outcomes(name, hook)
    assert captured, f"Dynamo compiled nothing for {name}"
    problems: list[str] = []
    for code, new_code in captured:
        problems += _check_code(new_code, "transformed")
        if code.co_name.startswith("torch_dynamo_resume_in_"):
            problems += _check_code(code, "resume function")
    assert not problems, "\n".join(dict.fromkeys(problems))


@pytest.mark.parametrize("name", _params(_RUN_XFAIL))
def test_recompiled_dynamo_code_runs(name: str) -> None:
    func, inputs = FUNCTIONS[name]
    # the oracle is Dynamo running its own code (torch 2.13 itself differs from eager on
    # try_then_break: it raises TorchRuntimeError for 10 // 0 traced with a symbolic n)
    expected = _compiled_outcomes(name, lambda code, new_code: None)
    installed: list[str] = []
    errors: list[str] = []

    def hook(code: types.CodeType, new_code: types.CodeType) -> types.CodeType | None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)
                replacement = unveil.recompile(new_code)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(f"{new_code.co_name}: {type(exc).__name__}: {exc}")
            return None
        installed.append(new_code.co_name)
        return replacement

    got = _compiled_outcomes(name, hook)
    assert not errors, "unveil.recompile failed inside the hook:\n" + "\n".join(errors)
    assert installed, f"Dynamo compiled nothing for {name}"
    for make, want, have in zip(inputs, expected, got, strict=True):
        assert have == want, f"{name}{make()!r}: Dynamo's code {want!r}, unveil's code {have!r}"
