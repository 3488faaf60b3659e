"""Plain-Python stand-ins for the instructions that have no source form of their own.

Structured output never needs them. They appear where the decompiler falls back to a
lower-level form: the primitive tests of a ``match`` case it could not read back into a
pattern, or the exception-group splitting of an ``except*`` it could not structure.
Each stand-in is a lambda called in place, so that the decompiled source stays plain
Python (it never imports unveil), binds no name and runs in any scope (a class body, a
comprehension). Each does what its instruction does; CPython's own flags for sequence,
mapping and self-matching types are the ``collections.abc`` registrations and the
builtin types that set them.
"""

from __future__ import annotations

import ast
from functools import cache


def _class_word(version: tuple[int, int]) -> str:
    """What MATCH_CLASS of CPython ``version`` calls a pattern's class when it is not one."""
    return "class" if version >= (3, 12) else "type"

# (``_raise(e)`` is ``(_ for _ in ()).throw(e)``: a raise as an expression)
_SOURCES = {
    # MATCH_SEQUENCE
    "match_sequence": """
(lambda s: not isinstance(s, (str, bytes, bytearray))
    and isinstance(s, __import__('collections.abc').abc.Sequence))
""",
    # MATCH_MAPPING
    "match_mapping": """
(lambda s: isinstance(s, __import__('collections.abc').abc.Mapping))
""",
    # MATCH_KEYS: the values of keys ``k`` in mapping ``s``, or None when one is missing
    "match_keys": """
(lambda s, k, m=object():
    (lambda v: v if len(v) == len(k) else None)(tuple(
        __import__('itertools').takewhile(lambda x: x is not m, (
            (_ for _ in ()).throw(ValueError(f'mapping pattern checks duplicate key ({key!r})'))
            if key in k[:i] else get(key, m)
            for get in (s.get,) for i, key in enumerate(k))))))
""",
    # MATCH_CLASS: the attributes class pattern ``c(<n positional>, <names kw>)`` binds,
    # or None when it does not match. ``a``: the names the positional sub-patterns read
    # (None: the one positional sub-pattern of a self-matching builtin is the subject)
    "match_class": """
(lambda s, c, n, kw, m=object(),
        own=(bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple):
    (_ for _ in ()).throw(TypeError('called match pattern must be a CLASS_WORD'))
    if not isinstance(c, type) else None if not isinstance(s, c) else
    (lambda a: (lambda names, head: (lambda vals: tuple(head + vals)
                                     if len(vals) == len(names) else None)(list(
        __import__('itertools').takewhile(lambda v: v is not m, (
            (_ for _ in ()).throw(TypeError(f'{c.__name__}() got multiple sub-patterns '
                                            f'for attribute {x!r}'))
            if names.index(x) != i else getattr(s, x, m)
            for i, x in enumerate(names))))))(
        ([] if a is None else [
            x if isinstance(x, str) else (_ for _ in ()).throw(TypeError(
                f'__match_args__ elements must be strings (got {type(x).__name__})'))
            for x in a[:n]]) + list(kw),
        [s] if a is None else []))(
        () if not n else
        (lambda a, most: (_ for _ in ()).throw(TypeError(
            f'{c.__name__}.__match_args__ must be a tuple (got {type(a).__name__})'))
            if a is not m and not isinstance(a, tuple) else
            (_ for _ in ()).throw(TypeError(
                f'{c.__name__}() accepts {most(a)} positional sub-pattern'
                f'{"" if most(a) == 1 else "s"} ({n} given)'))
            if n > most(a) else None if a is m else a)(
            getattr(c, '__match_args__', m),
            lambda a: len(a) if a is not m else 1 if issubclass(c, own) else 0)))
""",
    # COPY_DICT_WITHOUT_KEYS (3.10): the ``**rest`` of a mapping pattern
    "dict_without_keys": """
(lambda s, k: (lambda d: [d.__delitem__(x) for x in k] and d or d)(dict(s)))
""",
    # CHECK_EG_MATCH: (the rest, the match) of an ``except*`` clause
    "exception_group_split": """
(lambda e, t: (lambda mr: (mr[1], mr[0]))(e.split(t))
    if isinstance(e, BaseExceptionGroup) else
    (None, (ExceptionGroup if isinstance(e, Exception) else BaseExceptionGroup)('', [e]))
    if isinstance(e, t) else (e, None))
""",
    # PREP_RERAISE_STAR: what an ``except*`` statement raises again, if anything
    "prep_reraise_star": """
(lambda orig, raised, leaves=(lambda f: lambda x: f(f, x))(
        lambda f, x: [y for e in x.exceptions for y in f(f, e)]
        if isinstance(x, BaseExceptionGroup) else [x]):
    (lambda excs:
        None if not excs else orig if len(excs) == 1 and excs[0] is orig else
        (lambda ids: (lambda reraised, new: (lambda parts: parts[0] if len(parts) == 1
                                              else BaseExceptionGroup('', parts))(
            [g for g in [orig.subgroup(lambda e: id(e) in {
                id(x) for r in reraised for x in leaves(r)})] if g is not None
             and reraised] + new))(
            [e for e in excs if all(id(x) in ids for x in leaves(e))],
            [e for e in excs if not all(id(x) in ids for x in leaves(e))]))(
            {id(x) for x in leaves(orig)})
        if isinstance(orig, BaseExceptionGroup) else
        (lambda kept: kept[0] if len(kept) == 1 else BaseExceptionGroup('', kept))(
            [e for e in excs if e is not orig]))(
        [e for e in raised if e is not None]))
""",
}

KINDS = frozenset(_SOURCES)


@cache
def _parsed(kind: str, word: str) -> str:
    source = _SOURCES[kind].strip().replace("CLASS_WORD", word)
    return ast.unparse(ast.parse(source, mode="eval"))


def primitive(kind: str, args: list[ast.expr], version: tuple[int, int]) -> ast.expr:
    """``<stand-in for kind>(*args)``: an expression that does what the instruction of
    CPython ``version`` does (its error messages too)."""
    func = ast.parse(_parsed(kind, _class_word(version)), mode="eval").body
    return ast.Call(func=func, args=args, keywords=[])


def is_primitive(node: ast.AST) -> bool:
    """Is ``node`` one of the stand-ins (the lambda :func:`primitive` calls)?"""
    return isinstance(node, ast.Lambda) and ast.unparse(node) in _texts()


@cache
def _texts() -> frozenset[str]:
    return frozenset(_parsed(k, w) for k in KINDS for w in ("class", "type"))
