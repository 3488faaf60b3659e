"""with statements: single, nested, multiple items, return/break inside, suppression."""

import contextlib

from ._support import cases

LOG: list = []


class Resource:
    """Logs entering and leaving; optionally suppresses exceptions."""

    def __init__(self, name, suppress=False):
        self.name = name
        self.suppress = suppress

    def __enter__(self):
        LOG.append(("enter", self.name))
        return self.name.upper()

    def __exit__(self, exc_type, exc, tb):
        LOG.append(("exit", self.name, exc_type.__name__ if exc_type else None))
        return self.suppress


@contextlib.contextmanager
def tag(name):
    LOG.append(f"<{name}>")
    try:
        yield name
    finally:
        LOG.append(f"</{name}>")


@cases(("a",), ("b",))
def simple_with(name):
    with Resource(name) as handle:
        LOG.append(("body", handle))
    return handle


@cases((0,), (1,))
def with_without_as(fail):
    with Resource("plain"):
        if fail:
            raise ValueError("inside")
    return "done"


@cases(("x", "y"), ("p", "q"))
def nested_with(a, b):
    with Resource(a) as first:
        with Resource(b) as second:
            LOG.append(first + second)
    return LOG[-1] if LOG else None


@cases(("x", "y"),)
def multiple_items(a, b):
    with Resource(a) as first, Resource(b) as second, Resource("third"):
        LOG.append((first, second))
    return len(LOG)


@cases((0,), (1,))
def return_inside_with(early):
    with Resource("r") as r:
        if early:
            return "early " + r
        LOG.append("late")
    return "late " + r


@cases(([1, 2, 3, 4],), ([],))
def break_inside_with(items):
    total = 0
    for item in items:
        with Resource(str(item)):
            if item == 3:
                break
            total += item
    return total


@cases(([1, 2, 3],),)
def continue_inside_with(items):
    seen = []
    for item in items:
        with Resource(str(item)):
            if item == 2:
                continue
            seen.append(item)
    return seen


@cases((0,), (1,))
def suppressing_with(fail):
    with Resource("s", suppress=True):
        LOG.append("start")
        if fail:
            raise KeyError("suppressed")
        LOG.append("end of body")
    return "after"


@cases((0,), (1,), (2,))
def contextlib_suppress(kind):
    with contextlib.suppress(KeyError, IndexError):
        if kind == 1:
            raise KeyError("k")
        if kind == 2:
            raise IndexError("i")
        LOG.append("no error")
    return kind


@cases(("div",), ("span",))
def generator_context_manager(name):
    with tag(name) as t:
        with tag(t + "-inner"):
            LOG.append("text")
    return list(LOG)


@cases((0,), (1,))
def with_inside_try(fail):
    try:
        with Resource("t"):
            if fail:
                raise RuntimeError("boom")
    except RuntimeError as e:
        LOG.append(("caught", str(e)))
        return "caught"
    return "ok"


@cases((0,), (1,))
def try_inside_with(fail):
    with Resource("outer"):
        try:
            if fail:
                raise ValueError
            LOG.append("fine")
        except ValueError:
            LOG.append("handled")
        finally:
            LOG.append("finally")
    return len(LOG)


@cases(([3, 1, 2],),)
def with_target_tuple(items):
    class Pair:
        def __enter__(self):
            return items[0], items[-1]

        def __exit__(self, *exc):
            return False

    with Pair() as (first, last):
        return first + last


@cases(("k",),)
def with_target_attribute_and_subscript(key):
    store = {}

    class Holder:
        pass

    h = Holder()
    with Resource("a") as h.value, Resource("b") as store[key]:
        pass
    return h.value, store


@cases((0,), (1,))
def exit_stack(n):
    with contextlib.ExitStack() as stack:
        for i in range(n + 2):
            stack.enter_context(Resource(f"r{i}"))
        LOG.append("all entered")
    return len(LOG)


@cases((0,), (1,))
def with_in_loop_with_else(fail):
    for name in ("a", "b"):
        with Resource(name):
            if fail and name == "b":
                break
    else:
        LOG.append("no break")
    return len(LOG)


@cases(("x",),)
def with_return_value_of_body(name):
    with tag(name):
        value = name * 3
    return value


@cases((0,), (1,))
def parenthesized_with(flag):
    with (
        Resource("one") as one,
        Resource("two", suppress=bool(flag)) as two,
    ):
        if flag:
            raise ValueError("suppressed by two")
        LOG.append(one + two)
    return len(LOG)


@cases((0,), (1,))
def with_nullcontext(use):
    cm = Resource("real") if use else contextlib.nullcontext("null")
    with cm as value:
        return value


class _Lock:
    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append(("exit", exc[0]))
        return False


@cases(([1, 2, 3], 2), ([], 0), ([5, 0, 7], 1), ([1], "x"))
def loop_with_breaks_inside_with(items, limit):
    # 3.12+ leaves the loop's jump back and its tests' jumps out of the protected range
    written = 0
    with _Lock():
        while written < len(items):
            if items[written] == 0:
                break
            written += 1
            if written >= limit:
                break
    with _Lock():
        for x in items:
            if x == 5:
                break
        else:
            written += 100
    return written


class _Raising:
    def __init__(self, exc):
        self.exc = exc

    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append(("exit", exc[0]))
        if self.exc is not None:
            raise self.exc
        return False


@cases((True, None), (False, None), (True, OSError("x")), (False, KeyError("k")))
def return_in_with_in_try(early, exit_error):
    # the with's clean-up copy runs, then the try's return tail
    try:
        with _Raising(exit_error):
            if early:
                return 1
            LOG.append("body")
    except OSError:
        pass
    return 2


@cases(([1, 2, 0],), ([3, 3],), ([],))
def nested_with_loop_returns(values):
    # returns from a loop inside two context managers: each return runs both exits
    it = iter(values)
    with Resource("outer"), Resource("inner"):
        while True:
            v = next(it, None)
            if v is None:
                return "exhausted"
            if v == 0:
                return "zero"
            LOG.append(v)


@cases((0, 3), (1, 3), (2, 0))
def with_returning_chained_comparison(low, high):
    # the comparison's value is named before ``__exit__`` runs, then returned
    with Resource("q"):
        LOG.append("in")
        return low < len(LOG) <= high + low


@cases((-1, "abc"), (2, "abcdef"), (1, None))
def if_in_try_in_with(limit, data):
    # 3.13 leaves the first arm's jump to the join out of the try's range, in the with's
    with Resource("g") as name:
        try:
            if limit < 0:
                decoded = data[:]
            else:
                decoded = data[:limit + 1]
        except TypeError:
            raise ValueError("invalid data") from None
    LOG.append(name)
    return decoded


@cases(([1, 2, 3],), ([],), ([5],))
def loop_in_two_items_with(data):
    # 3.12+ leaves the loop's jump back out of the inner item's range (a hole of the
    # outer one too)
    count = 0
    sent = []
    with Resource("a") as a, Resource("b") as b:
        amount = len(data)
        while count < amount:
            sent.append((a, b, data[count:]))
            count += 1
    return sent


@cases((0, 3), (5, 2))
def while_loop_in_with(count, limit):
    # 3.12+ copies the loop's test to its bottom, with the with's values on the stack
    with Resource("w") as name:
        while count < limit:
            count += 1
            LOG.append((name, count))
    return count


@cases((["a", "bx", "c"], False), (["a", "c"], False), (["a", 1], True), ([], False))
def return_from_a_for_loop_in_a_with(words, suppress):
    # (pdb.find_function: the return leaves the loop into the with's clean-up copy)
    with Resource("r", suppress):
        for word in words:
            if "x" in word:
                return word
        LOG.append("no x")
    return None


@cases(([3, 0, 2],), ([1, 1],), ([],))
def return_from_a_while_loop_in_a_with(items):
    # (the return's value is named before the clean-up copy; the loop's test is copied)
    items = list(items)
    with Resource("w"):
        while items:
            item = items.pop()
            if not item:
                return len(items)
    return -1


@cases((["a", "bad", "c"],), (["bad", "x"],), (["c", "bad", "x"],), ([],), (["x"],))
def break_after_a_with_in_a_try_in_a_loop(names):
    # (the break after the with runs when the body finishes and when ``suppress``
    # swallows the body's error: it must not move into the body)
    data = []
    for name in names:
        try:
            with contextlib.suppress(KeyError):
                data.append({}[name] if name == "bad" else name)
                if name == "c":
                    raise OSError(name)
            break
        except OSError:
            data.append("os")
    return data


class _Chunks:
    def __init__(self, chunks):
        self.chunks = chunks

    def __enter__(self):
        LOG.append("open")
        return iter(self.chunks)

    def __exit__(self, *exc):
        LOG.append(("close", exc[0]))
        return False


@cases((["ab", "ab", ""], ["ab", "ab", ""]), (["ab", "x"], ["ab", "y"]), (["a"], []),
       ([], []))
def endless_loop_of_returns_in_two_withs(first, second):
    # (3.14 leaves a test's jump and the jump back out of the protected range where it
    # turned 'if not c: return' around)
    with _Chunks(first) as a, _Chunks(second) as b:
        while True:
            x = next(a, None)
            y = next(b, None)
            if x != y:
                return False
            if not x:
                return True


class _Proc:
    def __init__(self, out, suppress):
        self.out = out
        self.suppress = suppress

    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append(("exit", exc[0]))
        return self.suppress

    def read(self):
        if self.out is None:
            raise ValueError("no output")
        return self.out


class _Temp:
    def close(self):
        LOG.append("close")


@cases((_Temp(), "out", False), (_Temp(), None, True), (_Temp(), None, False),
       (_Temp(), OSError, False))
def return_in_a_clause_then_a_with_in_a_try_finally(temp, out, suppress):
    # (3.12+ lays the with's way on after a suppressed exception out after the finally's
    # copy it jumps back to: no loop, and the clause's return is no break)
    try:
        try:
            if out is OSError:
                raise OSError(out)
            proc = _Proc(out, suppress)
        except OSError:
            return None
        trace = "none"
        with proc:
            trace = proc.read()
    finally:
        temp.close()
    return trace


class _Gone:
    def close(self):
        LOG.append("close")
        raise FileNotFoundError("gone")


@cases(("a1b2", _Temp(), "out"), ("ab", _Gone(), "out"), ("x", _Temp(), None),
       ("x", _Temp(), OSError))
def explicit_return_none_after_a_finally_that_holds_a_try(text, temp, out):
    # (the finally's copy has blocks of its own: the code after the statement is read
    # with it; 'return None' there and the implicit return are two returns)
    try:
        try:
            if out is OSError:
                raise OSError(out)
            proc = _Proc(out, True)
        except OSError:
            return None
        trace = text
        with proc:
            trace = trace + proc.read()
    finally:
        try:
            temp.close()
        except FileNotFoundError:
            pass
    digits = [c for c in trace if c.isdigit()]
    if not digits:
        return None
    for d in digits:
        return int(d)
