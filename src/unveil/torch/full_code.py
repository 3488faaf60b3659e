"""``full_code_for_<fn>_<n>.py``: how torch.compile runs one function, as Python. The
original function, each cache entry's guard as a function, the transformed code it runs,
the resume functions that code calls (with their own entries), the graphs they call by
name, and a dispatch function that does what Dynamo's frame evaluation does."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from ..codeobj import CodeFlag
from ..dump_format import RESUME
from . import _dynamo


@dataclass
class EntryView:
    """A cache entry as the full-code file shows it."""

    compile_id: str | None
    guards: list[str]
    transformed_file: str | None  # the dumped file of the code it runs, if it is ours
    source: str | None  # that file's text


@dataclass
class CodeView:
    """One code object Dynamo compiled (the function, or one of its resume functions)."""

    code: CodeType
    entries: list[EntryView] = field(default_factory=list)


PRELUDE = '''import torch
from torch import Tensor
from torch.nn import Parameter


def check_tensor(value, cls, dispatch_keys, dtype, *, device=None, requires_grad, size,
                 stride):
    """Dynamo's tensor guard (TENSOR_MATCH) as it prints it: the same type, dtype, device
    index, requires_grad, and sizes and strides (None: any). The dispatch keys are shown,
    not checked, here."""
    return (type(value) is cls and value.dtype == dtype
            and value.device.index == device and value.requires_grad == requires_grad
            and value.dim() == len(size)
            and all(s is None or s == v for s, v in zip(size, value.shape))
            and all(s is None or s == v for s, v in zip(stride, value.stride())))
'''


def guard_expression(part: str) -> tuple[str | None, str]:
    """Dynamo's text for one guard as (a Python expression or None, a comment). Dynamo
    prints a few guards with trailing notes (``..., type=<class 'int'>``, ``... against
    {...}``) that are not Python; the note becomes the comment. A tensor guard's dispatch
    key set becomes a string (``check_tensor`` in :data:`PRELUDE` runs the rest)."""
    part = re.sub(r"DispatchKeySet\(([^()]*)\)", lambda m: repr(m.group(0)), part)
    candidates = [part]
    for sep in (" against ", ", type=<"):
        if sep in part:
            candidates.append(part.split(sep, 1)[0])
    for expr in candidates:
        try:
            ast.parse(expr, mode="eval")
        except SyntaxError:
            continue
        return expr, part[len(expr):].strip(" ,")
    return None, part


def guard_function(name: str, guards: list[str]) -> str:
    """A ``def`` that returns whether the guard holds, one check per line."""
    lines = [f"def {name}(L, G, **___kwargs_ignored):",
             '    """Dynamo runs this entry\'s code only if every check holds (L: the frame\'s '
             'locals, G: its globals)."""',
             "    __guard_hit = True"]
    for part in guards:
        expr, note = guard_expression(part)
        comment = f"  # {one_line(note)}" if note else ""
        if expr is None:
            lines.append(f"    # not Python as Dynamo prints it: {one_line(part)}")
        else:
            lines.append(f"    __guard_hit = __guard_hit and {expr}{comment}")
    lines.append("    return __guard_hit")
    return "\n".join(lines)


def one_line(text: str, limit: int = 300) -> str:
    """``text`` with its whitespace collapsed, cut at ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def renamed_def(source: str, old: str, new: str) -> str | None:
    """``source`` with its top-level ``def old`` renamed to ``new``; None if it has none."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == old:
            node.name = new
            found = True
    return ast.unparse(tree) if found else None


def original_source(code: CodeType) -> str:
    """The source of ``code`` as written, else decompiled (resume functions have none)."""
    if not RESUME.match(code.co_name):
        try:
            return textwrap.dedent(inspect.getsource(code))
        except (OSError, TypeError):
            pass
    from ..decompiler.api import decompile

    try:
        return decompile(code)
    except Exception as exc:  # noqa: BLE001 (shown in the file, never raised)
        return f"# unveil could not decompile {code.co_name}: {exc}\n"


def signature_of(code: CodeType) -> str:
    """``code``'s parameter list as source (defaults are not in the code object)."""
    n_pos = code.co_argcount
    n_posonly = code.co_posonlyargcount
    n_kwonly = code.co_kwonlyargcount
    names = list(code.co_varnames)
    params = names[:n_pos]
    out = []
    for i, name in enumerate(params):
        out.append(name)
        if n_posonly and i == n_posonly - 1:
            out.append("/")
    index = n_pos + n_kwonly
    if code.co_flags & CodeFlag.VARARGS:
        out.append("*" + names[index])
        index += 1
    elif n_kwonly:
        out.append("*")
    out.extend(names[n_pos:n_pos + n_kwonly])
    if code.co_flags & CodeFlag.VARKEYWORDS:
        out.append("**" + names[index])
    return ", ".join(out)


def call_arguments(code: CodeType) -> str:
    """The arguments that pass ``code``'s own parameters on unchanged."""
    n_pos, n_kwonly = code.co_argcount, code.co_kwonlyargcount
    names = list(code.co_varnames)
    out = names[:n_pos]
    index = n_pos + n_kwonly
    if code.co_flags & CodeFlag.VARARGS:
        out.append("*" + names[index])
        index += 1
    out.extend(f"{n}={n}" for n in names[n_pos:n_pos + n_kwonly])
    if code.co_flags & CodeFlag.VARKEYWORDS:
        out.append("**" + names[index])
    return ", ".join(out)


def code_views(code: CodeType, transformed: dict[int, tuple[str, str]],
               entries: Callable[[CodeType], list[_dynamo.CacheEntry]] = _dynamo.cache_entries,
               ) -> CodeView:
    """``code``'s cache ``entries``; ``transformed`` maps id(code object that runs) to
    (dumped file name, its text)."""
    view = CodeView(code)
    for entry in entries(code):
        file, text = transformed.get(id(entry.code), (None, None))
        view.entries.append(EntryView(entry.compile_id, entry.guards, file, text))
    return view


def full_code(fn_name: str, views: list[CodeView], graphs: dict[str, list[str]]) -> str:
    """The text of ``full_code_for_<fn>``: ``views[0]`` is the function, the others its
    resume functions; ``graphs`` maps compiled-function names to their dumped files."""
    out = [f'"""How torch.compile runs {fn_name}, written by unveil.\n\n'
           "When a function is called, Dynamo tries its cache entries, newest first, and runs "
           "the\ntransformed code of the first entry whose guard holds; if none holds, it "
           "compiles the\nfunction again (a recompile) and adds an entry. The dispatch "
           "functions at the end do\nexactly that. Names Dynamo installs in the module "
           "(__compiled_fn_*, __resume_at_*)\nare its compiled graphs and resume functions; "
           "the files of the graphs are listed below.\n\nTo run the dispatch, execute "
           "this file in a namespace that holds the function's module\nglobals and the "
           "guards' helpers (each cache entry's guard_manager.closure_vars).\n"
           '"""', PRELUDE.rstrip()]
    from ..decompiler.api import LAMBDA_NAME

    dispatch: list[str] = []
    for index, view in enumerate(views):
        code = view.code
        where = f"{code.co_filename}:{code.co_firstlineno}"
        title = "the function" if index == 0 else "a resume function (after a graph break)"
        out.append(f"# {'=' * 70}\n# {code.co_name}: {title}, {where}\n# {'=' * 70}")
        out.append(original_source(code).rstrip())
        base = identifier(code.co_name)
        checks = []
        for k, entry in enumerate(view.entries):
            guard = f"__guard_{k}_for_{base}"
            body = f"__transformed_code_{k}_for_{base}"
            out.append(f"# cache entry {k} (compile {entry.compile_id}); its code: "
                       f"{entry.transformed_file or 'not dumped'}")
            out.append(guard_function(guard, entry.guards))
            # (a lambda's transformed code is a ``def`` of that name)
            own = LAMBDA_NAME if code.co_name == "<lambda>" else code.co_name
            renamed = renamed_def(entry.source, own, body) if entry.source else None
            if renamed is None:
                out.append(f"# (the transformed code of entry {k} is not available as source)")
                continue
            out.append(renamed)
            checks.append((guard, body))
        lines = [f"def __dispatch_{base}({signature_of(code)}):",
                 f'    """What Dynamo does when {code.co_name} is called."""',
                 "    L, G = dict(locals()), globals()"]
        for guard, body in checks:
            lines.append(f"    if {guard}(L, G):")
            lines.append(f"        return {body}({call_arguments(code)})")
        lines.append(f"    # no guard holds: Dynamo compiles {code.co_name} again")
        if code.co_name.isidentifier():
            lines.append(f"    return {code.co_name}({call_arguments(code)})")
        else:  # a lambda has no name to call it by
            lines.append(f"    raise LookupError({'no guard holds: Dynamo compiles ' + code.co_name + ' again'!r})")
        dispatch.append("\n".join(lines))
    if graphs:
        out.append("# " + "=" * 70 + "\n# compiled graphs, by the name the code calls\n# "
                   + "=" * 70)
        for name, files in sorted(graphs.items()):
            out.append(f"# {name}: " + ", ".join(files))
    out.append("# " + "=" * 70 + "\n# the dispatch\n# " + "=" * 70)
    out.extend(dispatch)
    return "\n\n\n".join(out) + "\n"


def dispatch_namespace(fn: Any) -> dict[str, Any]:
    """A namespace in which a ``full_code_for_<fn>`` file runs: ``fn``'s module globals
    (where Dynamo installs compiled graphs and resume functions) and the helpers its
    guards call. ``exec`` the file in it, then call ``__dispatch_<fn>(...)``."""
    fn = getattr(fn, "_torchdynamo_orig_callable", fn)
    fn = getattr(fn, "forward", fn)  # an nn.Module: its forward
    code = fn.__code__
    namespace = dict(fn.__globals__)
    for entry in _dynamo.cache_entries(code):
        namespace.update(entry.closure_vars)
    return namespace


def identifier(name: str) -> str:
    """``name`` made a safe identifier and part of a file name (``<lambda>`` -> ``lambda``)."""
    out = re.sub(r"\W+", "_", name).strip("_")
    return out or "code"
