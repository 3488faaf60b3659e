"""``except*`` and exception groups (Python 3.11+)."""

from ._support import cases

LOG: list = []


@cases((0,), (1,), (2,), (3,))
def handle_group(kind):
    errors = []
    if kind & 1:
        errors.append(ValueError("v"))
    if kind & 2:
        errors.append(TypeError("t"))
    try:
        if errors:
            raise ExceptionGroup("many", errors)
    except* ValueError as eg:
        LOG.append(("value", [str(e) for e in eg.exceptions]))
    except* TypeError as eg:
        LOG.append(("type", len(eg.exceptions)))
    return len(LOG)


@cases((0,), (1,))
def except_star_reraises_rest(n):
    try:
        try:
            raise ExceptionGroup("g", [KeyError("k"), OSError("o")] if n else [KeyError("k")])
        except* KeyError:
            LOG.append("keys handled")
    except ExceptionGroup as rest:
        return [type(e).__name__ for e in rest.exceptions]
    return "all handled"


@cases((0,), (1,))
def except_star_naked_exception(n):
    try:
        if n:
            raise ValueError("naked")
    except* ValueError as eg:
        LOG.append((type(eg).__name__, [e.args for e in eg.exceptions]))
    return len(LOG)


@cases((0,), (1,))
def except_star_with_else_finally(n):
    try:
        if n:
            raise ExceptionGroup("x", [ZeroDivisionError()])
    except* ZeroDivisionError:
        LOG.append("zde")
    else:
        LOG.append("else")
    finally:
        LOG.append("finally")
    return list(LOG)


@cases((0,), (1,), (2,))
def except_star_tuple(n):
    excs = [[], [IndexError(1)], [KeyError(2), IndexError(3)]][n]
    try:
        if excs:
            raise ExceptionGroup("lookup", excs)
    except* (KeyError, IndexError) as eg:
        LOG.append(sorted(repr(e) for e in eg.exceptions))
    return LOG


@cases((0,), (1,))
def except_star_raise_new(n):
    try:
        try:
            if n:
                raise ExceptionGroup("g", [ValueError(1)])
        except* ValueError:
            raise RuntimeError("replaced")
    except ExceptionGroup as eg:
        return [type(e).__name__ for e in eg.exceptions]
    except RuntimeError as e:
        return str(e)
    return "none"


@cases(([1, 0, "a", 2],), ([1],))
def collect_and_group(values):
    errors = []
    results = []
    for v in values:
        try:
            results.append(10 // v)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    try:
        if errors:
            raise ExceptionGroup("batch", errors)
    except* ZeroDivisionError as eg:
        results.append(("zero", len(eg.exceptions)))
    except* TypeError as eg:
        results.append(("type", len(eg.exceptions)))
    return results


@cases((0,), (1,))
def add_note_and_group(n):
    try:
        err = ValueError("base")
        err.add_note("extra context")
        if n:
            raise ExceptionGroup("noted", [err])
        raise err
    except* ValueError as eg:
        notes = [e.__notes__ for e in eg.exceptions]
    return notes


@cases((0,), (1,), (2,), (3,))
def except_star_clause_with_branches(kind):
    excs = [ValueError(kind), TypeError(kind)][: kind or 1]
    out = []
    try:
        if kind:
            raise ExceptionGroup("g", excs)
    except* ValueError as eg:
        if len(eg.exceptions) > 1:
            out.append("many")
        else:
            out.append("one")
            for e in eg.exceptions:
                out.append(e.args)
    except* TypeError:
        try:
            out.append(1 / (kind - 2))
        except ZeroDivisionError:
            out.append("zero")
    return out


@cases(([0, 1, 2],), ([],))
def except_star_in_loop(items):
    seen = []
    for i in items:
        try:
            if i % 2:
                raise ExceptionGroup("odd", [ValueError(i)])
            seen.append(i)
        except* ValueError as eg:
            seen.append(-len(eg.exceptions))
    return seen


@cases((0,), (1,), (2,))
def except_star_body_raises_into_group(n):
    try:
        try:
            raise ExceptionGroup("g", [ValueError(n), KeyError(n)])
        except* ValueError:
            if n:
                raise IndexError(n)
        except* KeyError as eg:
            if n > 1:
                raise eg.exceptions[0]
    except ExceptionGroup as outer:
        return sorted(type(e).__name__ for e in outer.exceptions)
    return "handled"


@cases((0,), (1,))
def except_star_generator(n):
    def gen():
        try:
            yield 1
            if n:
                raise ExceptionGroup("g", [OSError(n)])
            yield 2
        except* OSError:
            yield "os"
    return list(gen())


class ExceptStarInClassBody:
    try:
        raise ExceptionGroup("class", [ValueError()])
    except* ValueError as caught:
        KIND = type(caught).__name__
    finally:
        DONE = True


@cases(())
def use_except_star_class_body():
    return ExceptStarInClassBody.KIND, ExceptStarInClassBody.DONE


@cases((0,), (1,), (2,), (3,))
def except_star_clause_that_only_passes(n):
    # (with an empty body the clause's test and its skip meet at once: it stays a test)
    try:
        if n == 1:
            raise ExceptionGroup("g", [ValueError(1)])
        if n == 2:
            raise ExceptionGroup("g", [ValueError(2), KeyError(2)])
        if n == 3:
            raise KeyError(3)
    except* ValueError:
        pass
    return n
