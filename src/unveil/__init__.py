"""unveil: turn CPython bytecode back into Python source, and open up torch.compile.

The decompiler needs nothing but the standard library::

    import unveil
    print(unveil.decompile(some_function))
    new_code = unveil.recompile(some_function.__code__, "dump/some_function.py")
"""

from __future__ import annotations

from .errors import BadInputError, DecompilationError, UnveilError

__version__ = "0.1.0"

__all__ = [
    "BadInputError",
    "DecompilationError",
    "UnveilError",
    "debug",
    "decompile",
    "explain",
    "install",
    "prepare_debug",
    "recompile",
    "record",
    "uninstall",
]


def decompile(obj: object, *, force_fallback: bool = False) -> str:
    """Return Python source equivalent to ``obj``.

    ``obj`` may be a function, method, lambda, code object, generator or coroutine
    function, class, or a module's code object. ``force_fallback=True`` writes its body
    as the ``while True:`` state machine used where control flow has no structured form
    (to test that form).
    """
    from .decompiler.api import decompile as _decompile

    return _decompile(obj, force_fallback=True) if force_fallback else _decompile(obj)


def recompile(code, filename: str | None = None, *,
              force_fallback: bool = False):
    """Decompile ``code`` and compile the source back into a code object.

    The new code object has the same name, argument layout and free/cell variables
    as ``code`` and the same non-literal constants, so it can replace ``code`` in a
    running program. If ``filename`` is given, the source is written there and the
    code object points at it, so debuggers step through that file. ``force_fallback``:
    as for :func:`decompile`.
    """
    from .decompiler.api import recompile as _recompile

    if force_fallback:
        return _recompile(code, filename, force_fallback=True)
    return _recompile(code, filename)


def prepare_debug(dump_dir, *, strict: bool = False, simplify: bool = True,
                  count_calls: bool = True):
    """While active (``with unveil.prepare_debug("dump"):``, or ``__enter__``/``__exit__``
    by hand), every frame TorchDynamo transforms is decompiled to a file in ``dump_dir``
    and the program runs the code compiled from that file; graphs, guards (as Python),
    graph breaks and recompiles are dumped too (see ``manifest.json``). ``strict=True``
    runs unveil's code only where it is bytecode-identical to Dynamo's. Each frame is
    written in its simplest form shown equivalent to Dynamo's (lists Dynamo juggles
    written where they go, temporaries inlined and named); ``simplify=False`` writes it
    faithfully, statement for statement. ``count_calls``: count how often each cache
    entry runs and time it (the manifest's ``hits``). Needs PyTorch."""
    from .torch.dump import prepare_debug as _prepare_debug

    return _prepare_debug(dump_dir, strict=strict, simplify=simplify, count_calls=count_calls)


def record(dump_dir, *, finish: str = "process", simplify: bool = True,
           count_calls: bool = True):
    """While active (``with unveil.record("dump"):``), Dynamo's own code runs and unveil
    only keeps each transformed frame's code and the trace's facts (O(1) work a frame);
    the files ``prepare_debug`` would write are written later, off torch.compile's path:
    by a separate process started at exit (``finish="process"``), in this process at exit
    (``"exit"``), or by ``unveil report dump_dir`` (``"later"``). Use it where compile time
    counts (large models, production); use ``prepare_debug`` to step through the code
    that runs. Needs PyTorch."""
    from .torch.record import record as _record

    return _record(dump_dir, finish=finish, simplify=simplify, count_calls=count_calls)


def explain(fn, *args, backend: str = "eager", dump_dir=None, **kwargs):
    """Compile ``fn`` (a function, method or ``nn.Module``) with
    ``torch.compile(backend=...)``, call it on the arguments under ``prepare_debug`` and
    return what happened: ``.result``, ``.frames``, ``str()`` is the summary, and a
    notebook shows the HTML report. Needs PyTorch."""
    from .torch.explain import explain as _explain

    return _explain(fn, *args, backend=backend, dump_dir=dump_dir, **kwargs)


def debug(*, pause: bool | None = None):
    """After ``prepare_debug``: ``with unveil.debug(): ...`` runs code so that breakpoints
    in the dumped files are hit (pdb, or VS Code through debugpy). Without a debugger
    attached it first stops in pdb so breakpoints can be set. Needs PyTorch."""
    from .torch.debug import debug as _debug

    return _debug(pause=pause)


def install() -> None:
    """With ``TORCH_LOGS=+bytecode``, show the decompiled source of every frame TorchDynamo
    transforms in PyTorch's log, next to the bytecode. Needs PyTorch."""
    from .torch.logs import install as _install

    _install()


def uninstall() -> None:
    """Undo :func:`install`."""
    from .torch.logs import uninstall as _uninstall

    _uninstall()
