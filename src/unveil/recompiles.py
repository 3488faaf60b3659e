"""Recompiles in words: Dynamo's recompile reasons as what changed, where that value enters
the user's code, its value then and now, and what to do about it.

Dynamo recompiles a frame when every cached version's guards fail; for each version it
prints the first check that failed, e.g. ``0/0: tensor 'x' size mismatch at index 0.
expected 8, actual 16`` or ``1/0: G['SCALE'] == 1.0  # y = x * SCALE  # model.py:19 in f``
(the second with the user line that read the value). :func:`explain` reads one such line
into a :class:`Cause`; :func:`words` says it as a sentence. The torch side adds the value
now, read from the frame being compiled. Standard library only (the report uses it too).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import Enum

__all__ = ["Cause", "Kind", "explain", "explained", "group", "read_value", "words"]


class Kind(str, Enum):
    """What a failed check is about."""

    SIZE = "size"
    STRIDE = "stride"
    DTYPE = "dtype"
    DEVICE = "device"
    REQUIRES_GRAD = "requires_grad"
    TENSOR = "tensor"  # another property of a tensor argument
    VALUE = "value"  # ``x == constant``: a Python value Dynamo specialised on
    LENGTH = "length"  # ``len(x) == n``
    TYPE = "type"  # ``___check_type_id``: another type
    IDENTITY = "identity"  # ``___check_obj_id``: another object
    OTHER = "other"


@dataclass
class Cause:
    """One failed check of one cached version (``guard_of``), read."""

    guard_of: str  # the compile id whose guards failed
    check: str  # the check as Dynamo prints it (first line, no comment)
    kind: Kind
    source: str  # the value as the user's code names it: "x", "self.use_relu", "SCALE"
    scope: str  # "argument", "global", "attribute" or "value"
    line: str | None = None  # where it enters: "model.py:12 (`if self.use_relu:`)"
    dim: int | None = None  # the dimension, for a size or stride
    old: str | None = None  # its value when that version was compiled
    new: str | None = None  # its value now (the torch side reads it)

    @property
    def key(self) -> tuple[str, str, str]:
        """What identical causes share (recompiles for the same reason are grouped)."""
        return (self.kind.value, self.source, str(self.dim))


_LINE = re.compile(r"^\s*(?P<cid>(?:!\d+/)?\d+/\d+): (?P<check>.*?)\s*(?:#\s*(?P<code>.*?)"
                   r"\s*#\s*(?P<file>\S+):(?P<line>\d+) in \S+\s*)?$")
_TENSOR = re.compile(r"^tensor '(?P<name>[^']+)' (?P<what>[\w ]+?) mismatch"
                     r"(?: at index (?P<dim>\d+))?\.?\s*(?:expected (?P<old>[^,]+?))?"
                     r"(?:,\s*actual (?P<new>.+))?$")
_SOURCE = re.compile(r"""^(?:[LG]\[['"](?P<key>[^'"]+)['"]\]|(?P<name>[A-Za-z_]\w*))"""
                     r"(?P<rest>(?:\.\w+|\[[^\]]+\])*)$")
# the C++ names Dynamo's tensor checks print, as torch names them (looked up with a
# cause's old and new values, which may be None)
_DTYPES: dict[str | None, str] = {"Float": "torch.float32", "Double": "torch.float64", "Half": "torch.float16",
           "BFloat16": "torch.bfloat16", "Long": "torch.int64", "Int": "torch.int32",
           "Short": "torch.int16", "Char": "torch.int8", "Byte": "torch.uint8",
           "Bool": "torch.bool", "ComplexFloat": "torch.complex64",
           "ComplexDouble": "torch.complex128"}
_KINDS = {"size": Kind.SIZE, "stride": Kind.STRIDE, "dtype": Kind.DTYPE,
          "device": Kind.DEVICE, "requires_grad": Kind.REQUIRES_GRAD}


def explain(reason: str, arguments: tuple[str, ...] = ()) -> Cause | None:
    """One recompile reason (one cached version's failed check, maybe with its user
    line and stack) read; ``arguments``: the names of the frame's arguments (a name
    among them is an argument, not a global). None for a line that is not a reason."""
    first = reason.splitlines()[0] if reason else ""
    match = _LINE.match(first)
    if match is None:
        return None
    check = match.group("check").strip()
    line = (f"{match.group('file').rsplit('/', 1)[-1]}:{match.group('line')} "
            f"(`{match.group('code')}`)" if match.group("file") else None)
    cause = Cause(match.group("cid"), check, Kind.OTHER, check, "value", line)
    tensor = _TENSOR.match(check)
    if tensor is not None:
        cause.kind = _KINDS.get(tensor.group("what").strip(), Kind.TENSOR)
        cause.source = tensor.group("name")
        cause.scope = _scope(cause.source, arguments)
        cause.dim = int(tensor.group("dim")) if tensor.group("dim") else None
        cause.old = _strip(tensor.group("old"))
        cause.new = _strip(tensor.group("new"))
        if cause.kind is Kind.DTYPE:
            cause.old, cause.new = _DTYPES.get(cause.old, cause.old), \
                _DTYPES.get(cause.new, cause.new)
        if cause.kind is Kind.REQUIRES_GRAD and cause.old in ("requires_grad=0",
                                                              "requires_grad=1"):
            cause.old, cause.new = ("False", "True") if cause.old.endswith("0") else \
                ("True", "False")
        return cause
    node = _parse(check)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
            node.ops[0], ast.Eq) and isinstance(node.comparators[0], ast.Constant):
        left = node.left
        if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and \
                left.func.id == "len" and len(left.args) == 1:
            cause.kind, left = Kind.LENGTH, left.args[0]
        else:
            cause.kind = Kind.VALUE
        cause.source = _named(ast.unparse(left))
        cause.old = repr(node.comparators[0].value)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in ("___check_type_id", "___check_obj_id") and node.args:
        cause.kind = Kind.TYPE if node.func.id == "___check_type_id" else Kind.IDENTITY
        cause.source = _named(ast.unparse(node.args[0]))
        kind = re.search(r"type=<class '([^']+)'>", check)
        cause.old = kind.group(1) if kind else None
    else:
        return cause
    cause.scope = _scope(cause.source, arguments)
    return cause


def _parse(check: str) -> ast.expr | None:
    try:
        return ast.parse(check.split(", type=<")[0], mode="eval").body
    except SyntaxError:
        return None


def _strip(text: str | None) -> str | None:
    return None if text is None else text.strip().rstrip(".")


def _named(source: str) -> str:
    """``L['x'].a`` -> ``x.a``, ``G['SCALE']`` -> ``SCALE``: the value as the user's code
    names it."""
    return re.sub(r"""\b[LG]\[['"]([^'"]+)['"]\]""", r"\1", source)


def _scope(source: str, arguments: tuple[str, ...]) -> str:
    root = re.match(r"[A-Za-z_]\w*", source)
    name = root.group(0) if root else source
    if source == name:
        return "argument" if name in arguments else "global"
    return "attribute"


def read_value(source: str, f_locals: dict[str, object], f_globals: dict[str, object]
               ) -> object:
    """The value ``source`` (``x``, ``self.use_relu``, ``x.shape[0]``) names in a frame
    with these locals and globals: names, attributes and constant subscripts only (it
    runs what Dynamo's guards run, nothing else). Raises LookupError where it cannot."""
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        raise LookupError(source) from None
    return _value(node, f_locals, f_globals)


def _value(node: ast.expr, f_locals: dict[str, object], f_globals: dict[str, object]
           ) -> object:
    if isinstance(node, ast.Name):
        for scope in (f_locals, f_globals):
            if node.id in scope:
                return scope[node.id]
        raise LookupError(node.id)
    if isinstance(node, ast.Attribute):
        try:
            return getattr(_value(node.value, f_locals, f_globals), node.attr)
        except AttributeError:
            raise LookupError(node.attr) from None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        try:
            return _value(node.value, f_locals, f_globals)[node.slice.value]  # type: ignore[index]  # any subscriptable
        except (KeyError, IndexError, TypeError):
            raise LookupError(repr(node.slice.value)) from None
    raise LookupError(ast.unparse(node))


def words(cause: Cause, function: str = "", where: str = "") -> str:
    """What changed in ``cause``, in words: the value (and where it enters the user's
    code), then and now (:func:`fix` says what to do). ``function``/``where``: the frame's
    function and ``file:line``, for an argument."""
    name = f"`{cause.source}`"
    if cause.scope == "argument":
        name += f" (argument of {function}{', ' + where if where else ''})"
    elif cause.scope == "global":
        name = f"the global {name}"
    if cause.line:
        name += f", read at {cause.line}"
    return f"{name}: {_change(cause)}"


def _change(cause: Cause) -> str:
    then = cause.old if cause.old is not None else "?"
    now = cause.new if cause.new is not None else "not known"
    what = {Kind.SIZE: f"its size {cause.dim}", Kind.STRIDE: f"its stride {cause.dim}",
            Kind.DTYPE: "its dtype", Kind.DEVICE: "its device",
            Kind.REQUIRES_GRAD: "its requires_grad", Kind.LENGTH: "its length",
            Kind.TYPE: "its type", Kind.IDENTITY: "the object"}.get(cause.kind, "it")
    if cause.kind is Kind.OTHER:
        return f"Dynamo's check `{cause.check}` failed"
    if cause.kind is Kind.IDENTITY:
        return (f"it is another object than when compiled (then of type {then})"
                if cause.old else "it is another object than when compiled")
    if cause.kind is Kind.TENSOR:
        return f"the tensor differs ({cause.check})"
    return f"{what} was {then}, now {now}"


def fix(cause: Cause) -> str:
    """What to do so that it does not recompile, for the kind of check that failed."""
    source = cause.source
    if cause.kind is Kind.SIZE:
        return (f"if that size varies, mark it dynamic before the first call "
                f"(torch._dynamo.mark_dynamic({source}, {cause.dim})) or compile with "
                f"dynamic=True; Dynamo itself makes a size dynamic after it changes once "
                f"(automatic dynamic shapes)")
    if cause.kind is Kind.STRIDE:
        return f"pass {source} with one memory layout (e.g. {source}.contiguous())"
    if cause.kind is Kind.DTYPE:
        return (f"cast {source} to one dtype before the call; each dtype gets its own "
                f"compiled version (up to torch._dynamo.config.recompile_limit)")
    if cause.kind is Kind.DEVICE:
        return f"keep {source} on one device"
    if cause.kind is Kind.REQUIRES_GRAD:
        return (f"call it with {source} requiring grad or not, always the same (for "
                f"inference, under torch.no_grad() each time)")
    if cause.kind in (Kind.VALUE, Kind.LENGTH):
        if cause.scope == "global":
            return (f"Dynamo specialises on the global {source} (read inside the compiled "
                    f"code): set it before the first call and keep it, or pass it as an "
                    f"argument (a tensor, if it changes often)")
        if cause.scope == "attribute":
            return (f"Dynamo specialises on the attribute {source}: set it before compiling "
                    f"and keep it, or keep what changes in a tensor (a buffer) or an "
                    f"argument")
        if cause.kind is Kind.LENGTH:
            return "each length compiles its own version: pad to a few fixed lengths"
        return (f"Dynamo specialises on {source}: an int argument becomes dynamic after it "
                f"changes once (automatic dynamic shapes); otherwise pass it as a tensor or "
                f"compile with dynamic=True")
    if cause.kind is Kind.TYPE:
        return f"pass {source} as the same type each call"
    if cause.kind is Kind.IDENTITY:
        return (f"Dynamo guards on which object {source} is: reuse one object (the same "
                f"function, module or class) rather than a new one each call")
    return "see Dynamo's guard for what it checks"


def explained(reasons: list[str], arguments: tuple[str, ...], function: str, where: str,
              now: Callable[[str], str | None] | None = None) -> list[dict[str, object]]:
    """Each of a frame's recompile ``reasons`` read, as the manifest keeps them: the
    :class:`Cause`'s fields, ``words`` and ``fix``. ``now(source)``: the value a source has now
    (the torch side reads it from the frame being compiled), or None."""
    out: list[dict[str, object]] = []
    for reason in reasons:
        cause = explain(reason, arguments)
        if cause is None:
            continue
        if cause.new is None and now is not None and cause.kind is not Kind.OTHER:
            cause.new = now(cause.source)
        entry: dict[str, object] = {k: v.value if isinstance(v, Kind) else v
                                    for k, v in asdict(cause).items()}
        entry["words"] = words(cause, function, where)
        entry["fix"] = fix(cause)
        out.append(entry)
    return out


def group(causes: list[tuple[str, Cause]]) -> list[tuple[Cause, list[str]]]:
    """Causes (each with the compile id it made recompile) with identical causes as one:
    each cause once, with the compile ids it made, in order of first appearance."""
    found: dict[tuple[str, str, str], tuple[Cause, list[str]]] = {}
    for cid, cause in causes:
        found.setdefault(cause.key, (cause, []))[1].append(cid)
    return list(found.values())
