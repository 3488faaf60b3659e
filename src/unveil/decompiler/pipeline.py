"""The stages one code object's body goes through, top to bottom, with their fallbacks.

====  =====================================  ==========================================
 1    ``bytecode.read``                      normalised instructions (``bytecode/``)
 2    ``rewrite.inline_comprehensions.fold`` 3.12+'s inlined comprehensions, each read
                                             as one expression
 3    ``rewrite.tails.undo_copies``          the compiler's copies of exits undone; if a
                                             module or class body falls back to the state
                                             machine, read again with its end's copies
                                             shared (``body_ends``), kept if that
                                             structures
 4    ``rewrite.patterns.fold``              ``match`` cases read into patterns; if the
                                             body does not structure with them, read
                                             again with the cases' primitive tests
 5    ``graph.cfg.build``                    basic blocks
 6    ``translate.blocks.Translator``        IR blocks
 7    ``structure.structurer.Structurer``    statements; on ``Unstructurable``, again on a
                                             fresh graph with returns in place
 8    ``tidy.idioms.tidy_raw``               idioms that need the IR
 9    ``Renderer.body``                      plain ``ast`` (a module or class body that
                                             would keep a return it cannot have falls
                                             back)
 --   ``structure.fallback.lower``           the fallback for stages 6-9: the state
                                             machine, from stage 5's graph, else from
                                             the code as compiled (before stage 3)
 10   ``rewrite.patterns.merge_matches``     a subject's cases as one ``match``
 11   ``tidy.idioms.tidy``                   the source idioms
====  =====================================  ==========================================

The driver (``functions.CodeDecompiler``) gives a :class:`Pipeline` the code object's data
and the callbacks its nested code needs, and signatures, classes and modules around the
body.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType

from .. import bytecode
from ..codeobj import code_kind
from ..errors import DecompilationError
from .graph import cfg as cfg_mod
from .ir.exprs import Names
from .render.renderer import Renderer
from .rewrite import patterns
from .rewrite.tails import undo_copies
from .structure.fallback import lower
from .structure.structurer import Structurer, Unstructurable
from .tidy.body_returns import returns_left, stuck_returns
from .tidy.idioms import tidy, tidy_raw
from .translate.blocks import Translator
from .translate.machine import Context


@dataclass
class Unit:
    """One code object as the stages see it. ``context(imported)``: a fresh translation
    context (``imported``: with the global names used as imported modules);
    ``renderer()``: a renderer for its trees; ``lowered``: the state machine is asked
    for (``force_fallback``)."""

    code: CodeType
    names: Names
    qualname: str
    lowered: bool
    context: Callable[[bool], Context]
    renderer: Callable[[], Renderer]


class Pipeline:
    """The stages of the module docstring for one code object. ``fallback_reason``: why
    the last reading fell back to the state machine (None: it structured)."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self.fallback_reason: str | None = None
        self._chains: bool | None = None  # (bytecode.chains(code), once: each
        #                                     inlined comprehension's region asks)

    def region(self, bc: bytecode.Bytecode, entry: list[ast.expr],
               inline: Callable[[bytecode.Bytecode], bytecode.Bytecode]) -> list[ast.stmt]:
        """Statements of ``bc`` (all of a code object, or a region of it) run from
        ``entry`` as the initial stack; ``inline`` is stage 2."""
        as_compiled = inline(bc)
        body = self._readings(as_compiled, entry, body_ends=False)
        if self.fallback_reason is None or entry \
                or code_kind(self.unit.code) not in ("module", "class"):
            return body
        # a module or class body cannot return: read again with the copies of its end
        # shared (a ``break`` the compiler gave the body's end to)
        first_reason, self.fallback_reason = self.fallback_reason, None
        again = self._readings(as_compiled, entry, body_ends=True)
        if self.fallback_reason is None:
            return again
        self.fallback_reason = first_reason
        return body

    def raw(self, bc: bytecode.Bytecode) -> list[ast.stmt]:
        """Stages 3-8 without the fallback, stage 4 and the second tries: a
        type-parameter scope's straight-line code, read for the markers it builds."""
        ir = Translator(cfg_mod.build(undo_copies(bc)), self.unit.context(False), []).run()
        try:
            return tidy_raw(Structurer(ir).run(), bc.layout.folded_not_tests)
        except Unstructurable as exc:
            raise DecompilationError(f"type parameter scope: {exc}",
                                     code_name=self.unit.qualname) from None

    def _readings(self, as_compiled: bytecode.Bytecode, entry: list[ast.expr], *,
                  body_ends: bool) -> list[ast.stmt]:
        """Stages 3 and 4: the body with ``match`` statements where it structures with
        them, else with the cases' primitive tests."""
        bc = undo_copies(as_compiled, body_ends=body_ends)
        with_cases = patterns.fold(bc)
        if with_cases is bc:
            return self._body(bc, entry, matches=False, as_compiled=as_compiled)
        # ``match`` statements when the whole body structures with them; otherwise the
        # cases' primitive tests, unless those do not structure either
        try:
            body: list[ast.stmt] | None = self._body(with_cases, entry)
        except DecompilationError:
            body = None
        folded_reason, self.fallback_reason = self.fallback_reason, None
        if body is not None and folded_reason is None:
            return body
        try:
            plain = self._body(bc, entry, matches=False, as_compiled=as_compiled)
        except DecompilationError:
            if body is None:
                raise
            plain = None
        if plain is None or body is not None and self.fallback_reason is not None:
            self.fallback_reason = folded_reason  # both lowered: the shorter one
            return body  # type: ignore[return-value]  # body is set when plain is None
        return plain

    def _body(self, bc: bytecode.Bytecode, entry: list[ast.expr], *,
              matches: bool = True,
              as_compiled: bytecode.Bytecode | None = None) -> list[ast.stmt]:
        """Stages 5-11. ``matches``: ``bc`` may hold ``MATCH_CASE`` (folded pattern
        code). ``as_compiled``: ``bc`` with the compiler's copies as they were, for the
        state machine when it cannot be built from ``bc``."""
        code = self.unit.code
        graph_cfg = cfg_mod.build(bc)
        ctx = self.unit.context(True)
        ir = Translator(graph_cfg, ctx, entry).run()
        try:
            if self.unit.lowered and not entry:
                raise Unstructurable("the fallback was asked for (force_fallback)")
            try:
                raw = Structurer(ir).run()
            except Unstructurable:
                # the second reading of what the layout leaves open, on a fresh graph
                # (the first attempt rewrote blocks of this one)
                ir = Translator(graph_cfg, ctx, entry).run()
                raw = Structurer(ir, returns_in_place=True).run()
            # (nested code objects are tidied as they are decompiled)
            if self._chains is None:
                self._chains = bytecode.chains(code)
            raw = tidy_raw(raw, bc.layout.folded_not_tests, chains=self._chains)
            body = self.unit.renderer().body(raw, ir.shares)
            if code_kind(code) in ("module", "class") and not entry \
                    and stuck_returns(body) \
                    and returns_left(body):
                # (the returns the caller cannot take out: inside a loop, a try)
                raise Unstructurable("a return inside a module or class body")
        except (Unstructurable, DecompilationError) as exc:
            self.fallback_reason = str(exc)
            try:
                body = self.state_machine(graph_cfg, ctx, entry)
            except DecompilationError:
                if as_compiled is None or as_compiled is bc:
                    raise
                # (the copies given back their jumps for the structured reading are
                # not needed here: the code as it was compiled)
                body = self.state_machine(cfg_mod.build(as_compiled), ctx, entry)
        if matches:
            body = patterns.merge_matches(body, self.unit.names.generated)
        return tidy(body, code, self.unit.names.generated)

    def state_machine(self, graph_cfg: cfg_mod.CFG, ctx: Context,
                      entry: list[ast.expr] | None = None) -> list[ast.stmt]:
        """The control flow as a loop over a state variable (always correct)."""
        ir = Translator(graph_cfg, ctx, entry, lowering=True).run()
        raw, special_names, _ = lower(ir, self.unit.names)
        renderer = self.unit.renderer()
        renderer.special_names = special_names
        return renderer.body(raw, ir.shares)
