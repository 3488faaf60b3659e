"""while / for loops: break, continue, else, nesting, try inside loops."""

from ._support import cases

LOG: list = []


@cases((5,), (0,), (1,))
def count_down(n):
    result = []
    while n > 0:
        result.append(n)
        n -= 1
    return result


@cases(([1, 2, 3],), ([],), ([-1, 5],))
def sum_for(items):
    total = 0
    for item in items:
        total += item
    return total


@cases(([3, 8, 1, 9], 8), ([3, 8], 4), ([], 1))
def find_index(items, target):
    for i, item in enumerate(items):
        if item == target:
            break
    else:
        return -1
    return i


@cases((7,), (9,), (2,), (1,), (97,))
def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    else:
        LOG.append(("prime", n))
    return True


@cases(([1, -2, 3, -4, 5],), ([],), ([-1],))
def skip_negatives(items):
    kept = []
    for x in items:
        if x < 0:
            continue
        kept.append(x)
    return kept


@cases((10,), (0,), (3,))
def while_true_break(limit):
    i = 0
    while True:
        i += 1
        if i >= limit:
            break
        LOG.append(i)
    return i


@cases((3, 4), (0, 2), (2, 0))
def nested_loops(rows, cols):
    grid = []
    for r in range(rows):
        row = []
        for c in range(cols):
            row.append(r * cols + c)
        grid.append(row)
    return grid


@cases(([[1, 2], [3, 4], [5, 6]], 4), ([[1]], 9), ([], 1))
def nested_break_flag(matrix, target):
    found = None
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            if value == target:
                found = (i, j)
                break
        if found:
            break
    return found


@cases(([[1, 2], [3, 4]], 3), ([[1, 2]], 7))
def nested_for_else(matrix, target):
    for row in matrix:
        for value in row:
            if value == target:
                LOG.append("hit")
                break
        else:
            LOG.append("row miss")
            continue
        break
    else:
        return "not found"
    return "found"


@cases((["1", "x", "3", ""],), ([],), (["7"],))
def loop_with_try(values):
    parsed = []
    for value in values:
        try:
            parsed.append(int(value))
        except ValueError:
            LOG.append(("bad", value))
            continue
        finally:
            LOG.append("tried")
    return parsed


@cases((10, 3), (0, 3), (5, 5))
def while_complex_condition(n, step):
    i = 0
    steps = 0
    while i < n and steps < 100 and not (i > 0 and i % 7 == 0):
        i += step
        steps += 1
    return i, steps


@cases((1,), (50,), (27,))
def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@cases(([3, 1, 2],), ([5, 4, 3, 2, 1],), ([],), ([1],))
def bubble_sort(items):
    items = list(items)
    n = len(items)
    for i in range(n):
        swapped = False
        for j in range(0, n - i - 1):
            if items[j] > items[j + 1]:
                items[j], items[j + 1] = items[j + 1], items[j]
                swapped = True
        if not swapped:
            break
    return items


@cases(([1, 3, 5, 7, 9], 7), ([1, 3, 5], 4), ([], 1), ([2], 2))
def binary_search(items, target):
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if items[mid] == target:
            return mid
        elif items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


@cases((5,), (0,))
def empty_loop_bodies(n):
    for _ in range(n):
        pass
    i = 0
    while i < n:
        i += 1
    for _ in []:
        pass
    return i


@cases(({"a": 1, "b": 2},), ({},))
def loop_over_dict(d):
    keys = []
    for key in d:
        keys.append(key)
    pairs = []
    for key, value in d.items():
        pairs.append(f"{key}={value}")
    for value in d.values():
        LOG.append(value)
    return keys, pairs


@cases(([(1, 2), (3, 4)],), ([],))
def loop_tuple_target(pairs):
    out = []
    for a, b in pairs:
        out.append(a * b)
    for i, (a, b) in enumerate(pairs):
        out.append(i + a + b)
    return out


@cases(([1, 2, 3, 4, 5, 6],), ([2],))
def while_else_break(items):
    items = list(items)
    while items:
        value = items.pop()
        if value % 5 == 0:
            LOG.append("five")
            break
    else:
        LOG.append("exhausted")
    return items


@cases((4,), (0,))
def for_else_no_break(n):
    total = 0
    for i in range(n):
        total += i
    else:
        total *= 10
    return total


@cases((3,), (6,))
def continue_in_while(n):
    i = 0
    odds = []
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        odds.append(i)
    return odds


@cases(([5, 3, 8, 0, 2],), ([1, 2],))
def loop_return_inside(items):
    for x in items:
        if x == 0:
            return "zero found"
        LOG.append(10 // x)
    return "no zero"


@cases((3,), (1,))
def triple_nested(n):
    count = 0
    for i in range(n):
        for j in range(i):
            for k in range(j):
                if (i + j + k) % 2:
                    continue
                count += 1
    return count


@cases(([1, 2, 3],), ([],))
def loop_variable_after(items):
    x = "unset"
    for x in items:  # noqa: B007
        pass
    return x


@cases((10,), (1,))
def fibonacci_list(n):
    a, b = 0, 1
    out = []
    while len(out) < n:
        out.append(a)
        a, b = b, a + b
    return out


@cases(([3, -1, 4, -1, 5],), ([-1, -2],))
def max_subarray(nums):
    best = current = nums[0]
    for x in nums[1:]:
        current = max(x, current + x)
        best = max(best, current)
    return best


@cases(("hello world",), ("",), ("aaa",))
def char_counts(text):
    counts = {}
    for ch in text:
        if ch == " ":
            continue
        if ch in counts:
            counts[ch] += 1
        else:
            counts[ch] = 1
    return counts


@cases((5, 2), (0, 1), (10, 0))
def loop_raises(n, divisor):
    out = []
    for i in range(n):
        out.append(i // divisor)
    return out


@cases(([1, 2, 3, 4],), ([10, 20],))
def iterate_while_modifying_copy(items):
    for item in items[:]:
        if item % 2 == 0:
            items.remove(item)
    return items


@cases((4,), (0,))
def while_with_else_and_continue(n):
    i = 0
    while i < n:
        i += 1
        if i == 2:
            continue
        LOG.append(i)
    else:
        LOG.append("done")
    return i


@cases(([["a", "b"], ["c"]],), ([],))
def flatten_loops(lists):
    flat = []
    for sub in lists:
        for item in sub:
            flat.append(item)
    return flat


@cases((20,), (2,))
def sieve(limit):
    is_p = [True] * (limit + 1)
    is_p[0] = False
    if limit >= 1:
        is_p[1] = False
    p = 2
    while p * p <= limit:
        if is_p[p]:
            for multiple in range(p * p, limit + 1, p):
                is_p[multiple] = False
        p += 1
    return [i for i, flag in enumerate(is_p) if flag]


@cases(([1, 2, None, 4],), ([None],), ([],))
def loop_break_in_try(values):
    total = 0
    for v in values:
        try:
            if v is None:
                break
            total += v
        finally:
            LOG.append(("visited", v))
    return total


@cases(([1, 2, 3],), ([0],))
def loop_continue_in_try(values):
    total = 0
    for v in values:
        try:
            if v == 2:
                continue
            total += 10 // v
        except ZeroDivisionError:
            total = -1
        finally:
            LOG.append(v)
    return total


@cases((3,), (0,))
def range_variants(n):
    return (
        list(range(n)),
        list(range(1, n + 1)),
        list(range(n, 0, -1)),
        [i for i in range(0, 10, n) if n] if n else [],
    )


@cases((["a", "b"],), (["a", "c"],), (["a"],), (["c", "a"],), ([],), (["a", "a", "b"],))
def scanner_with_returns_and_break(items):
    # an ``elif``/``else`` in the loop whose arms all leave (return, or break to the
    # return after the loop that the compiler copies there)
    i = 0
    n = len(items)
    while i < n:
        c = items[i]
        if c == "a":
            j = i + 1
            if j >= n:
                return -1
            i = j
        elif c == "b":
            return i
        else:
            break
        i += 1
    return n


class _Closer:
    def close(self):
        LOG.append("closed")


@cases(([0, 0, 3],), ([],), ([0],))
def return_from_loop_in_try_finally(items):
    # the return leaves the loop through the finally's copy of its clean-up
    closer = _Closer()
    try:
        for x in items:
            if x:
                return x
        y = 2
    finally:
        closer.close()
    return y


class _Stack:
    def __init__(self, items):
        self.items = list(items)

    def pop(self):
        return self.items.pop()


@cases(([1, 2],), ([],))
def drain_until_index_error(items):
    # the clause's ``return``/``break`` never comes back to the loop's head
    stack = _Stack(items)
    seen = []
    while True:
        try:
            item = stack.pop()
        except IndexError:
            break
        seen.append(item)
    while True:
        try:
            item = seen.pop()
        except IndexError:
            return stack.items
        LOG.append(item)


@cases(([["a"], ["b", "x"]], "x"), ([["x"]], "x"), ([["a"], []], "x"), ([], "x"))
def nested_loops_break_or_return(groups, wanted):
    # the inner loop's break jumps straight back to the outer loop's head
    for group in groups:
        for item in group:
            if item == wanted:
                if len(group) > 1:
                    return "in a bigger group"
                break
            if item is None:
                break
        else:
            return "missing from a group"
    return "found in every group"


@cases(([1, 2, 3], 2, 0, None), ([1, 2, 3], 5, 0, None), ([1, 2, 3], 3, 1, 2), ([], 1, 0, None))
def index_with_break_from_handler(seq, value, start, stop):
    # the clause's break: 3.12+ copies the code after the loop (a raise) into the clause
    i = start
    while stop is None or i < stop:
        try:
            v = seq[i]
        except IndexError:
            break
        if v is value or v == value:
            return i
        i += 1
    raise ValueError(value)


@cases(([1, 2, "x", 3],), ([],), ([4, 5],))
def while_with_break_from_handler(xs):
    out = []
    while xs:
        try:
            v = 10 // xs.pop()
        except TypeError:
            break
        out.append(v)
    return out


@cases(({"abc": 1, "abd": 2, "x": 3},), ({},))
def while_with_break_inside_for(defaults):
    # the inner loop's copied test has the for loop's iterator under it (pstats)
    known = {}
    bad = {}
    for word, tup in defaults.items():
        fragment = word
        while fragment:
            if fragment in known:
                bad[fragment] = 0
                break
            known[fragment] = tup
            fragment = fragment[:-1]
    for word in bad:
        del known[word]
    return known


@cases(([[1, 2], [2, 3]],), ([[1], [1]],), ([[1, 2], [3, 1]],), ([],))
def inner_for_else_breaks_the_outer_loop(seqs):
    # (the inner loop's ``else`` leaves the outer ``for`` from outside its body)
    seqs = [list(s) for s in seqs]
    out = []
    while seqs:
        for s1 in seqs:
            candidate = s1[0]
            for s2 in seqs:
                if candidate in s2[1:]:
                    candidate = None
                    break
            else:
                break
        if candidate is None:
            raise RuntimeError("inconsistent")
        out.append(candidate)
        for s in seqs:
            if s[0] == candidate:
                del s[0]
        seqs = [s for s in seqs if s]
    return out


@cases((["ab", "Ecd", "xy"], None), (["ab", "Mx", "cd"], None), (["ab", (1, 2), "cd"], None),
       ([], None))
def loop_exits_that_run_code_then_meet(tokens, compat):
    # (3.13 lays out each ``break`` with its own code, meeting after the loop:
    # tokenize.Untokenizer.untokenize)
    seen = []
    out = []
    it = iter(tokens)
    for t in it:
        if len(t) == 2:
            seen.append((t, list(it)))
            break
        kind, tok = t[0], t[1:]
        if kind == "E":
            out.append(tok)
            continue
        if kind == "M":
            break
        out.append(kind)
    return "".join(out), seen


@cases((["1", "2", ""],), (["1", "x"],), (["x"],), (["3", "4", "5", ""],))
def try_in_loop_whose_clause_breaks_or_raises(chunks):
    # (3.12+: no clause falls through, and the code after the try is not an else
    # clause: lzma.decompress)
    results = []
    chunks = list(chunks)
    while True:
        data = chunks.pop(0)
        try:
            res = int(data)
        except ValueError:
            if results:
                break
            else:
                raise
        results.append(res)
        if res > 4:
            raise LookupError(res)
        if not chunks[0]:
            break
    return "".join(map(str, results))



def _note(x):
    LOG.append(x)
    if x == "boom":
        raise ValueError(x)
    return x


@cases((["a", "b"],), (["boom", "b"],), (["boom", "boom"],), ([],))
def break_in_a_try_whose_finally_repeats_the_body(items):
    # the break's copy of the finally is the same statement as the body's last one:
    # only the copy goes before the break
    for item in items:
        try:
            _note(item)
            break
        except ValueError:
            pass
        finally:
            _note(item)
    return len(LOG)


@cases(([1, 2, 3], 2), ([5, 6], 100), ([], 1), ([4], 0))
def break_to_a_return_after_the_loop(items, hint):
    # (3.10 and 3.12+ copy ``return lines`` into the break's place)
    n = 0
    lines = []
    for line in items:
        lines.append(line)
        n += line
        if n >= hint:
            break
    return lines


@cases(((1, 2), [1, 2]), ((1, 2), [1, 3]), ((), []))
def break_with_code_and_an_else_then_return(x, y):
    for k, j in zip(x, y):
        if k is not j:
            y = tuple(y)
            break
    else:
        y = x
    return y


@cases(([[0, 1], [2]],), ([[0], [0]],), ([],), ([[1], [0, 0]],))
def breaks_of_nested_loops_before_a_return(rows):
    seen = []
    for row in rows:
        for cell in row:
            if cell:
                seen.append(cell)
                break
        else:
            seen.append(None)
            continue
        if len(seen) > 1:
            break
    return seen


@cases(([1, 2, 421],), ([1, 2],), ([],))
def raise_in_a_loop_like_the_raise_after_it(codes):
    log = []
    for code in codes:
        log.append(code)
        if code == 421:
            log.clear()
            raise ValueError(log)
    if len(log) < 2:
        log.reverse()
        raise ValueError(log)
    return log


@cases(([["x", "y"]], {"y"}), ([["a"], ["b", "c"]], {"c"}), ([], set()), ([["q"]], {"q"}))
def return_from_nested_loops_like_the_end(lines, keys):
    first = None
    for line in lines:
        for i in range(len(line)):
            if line[i] in keys:
                mac = len(line[i]) + i
                if mac > 1:
                    return mac
                first = first or mac
    return first or None


@cases((["a", "stop", "b"],), (["a"],), ([],))
def break_after_code_of_its_own(items):
    out = []
    for item in items:
        if item == "stop":
            out.append("stopped")
            break
        out.append(item)
    out.append("end")
    return out


@cases((b'"ab"', True), (b"'ab'", True), (b'"ab', True), (b"ab", True), (b"ab", False))
def break_with_a_check_of_its_own(data, strip):
    # (pickletools.read_stringnl: the break's code raises or goes on after the loop)
    if strip:
        for q in (b'"', b"'"):
            if data.startswith(q):
                if not data.endswith(q):
                    raise ValueError("quote %r not at both ends of %r" % (q, data))
                data = data[1:-1]
                break
        else:
            raise ValueError("no quotes around %r" % data)
    return data.decode("ascii")


@cases((["", "x", "int"],), (["x"],), ([],), (["", "int"],))
def break_into_a_try_after_the_loop(names):
    # (encodings.search_function: the break only jumps on into the next try statement,
    # where the loop's else goes on too)
    for name in names:
        if not name:
            continue
        try:
            mod = {"int": int, "str": str}[name]
        except KeyError:
            pass
        else:
            break
    else:
        mod = None
    try:
        getter = mod.__name__
    except AttributeError:
        getter = None
    return getter


@cases(([1, 2, 3],), ([],))
def while_loop_that_ends_the_function(items):
    # (3.12+ copies the implicit return after the first test and after the last)
    out = []
    while items:
        out.append(items.pop())
    LOG.append(out)


@cases(([[1], [2, 3], []],), ([],))
def while_walrus_loop_that_ends_the_function(chunks):
    it = iter(chunks + [[]])
    while chunk := next(it):
        LOG.append(len(chunk))


class _Socket:
    """Reads its chunks one by one; an exception instance among them is raised."""

    def __init__(self, chunks):
        self.chunks = list(chunks)
        self.seen = []

    def recv(self):
        item = self.chunks.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    def process(self, data):
        self.seen.append(data)


@cases(([b"a", b""],), ([b"a", InterruptedError(), b"b", b""],),
       ([b"a", BlockingIOError()],), ([KeyError("k")],), ([InterruptedError(), b""],))
def loop_whose_second_clause_leaves_it(chunks):
    # (asyncio's _read_from_self: the first clause goes on with the loop, the second
    # leaves it; the natural loop holds only the first)
    sock = _Socket(chunks)
    while True:
        try:
            data = sock.recv()
            if not data:
                break
            sock.process(data)
        except InterruptedError:
            continue
        except BlockingIOError:
            break
    return sock.seen


@cases(([b"a", b""],), ([b"a", InterruptedError(), b"b", b""],),
       ([b"a", BlockingIOError()],), ([KeyError("k")],), ([InterruptedError(), b""],))
def loop_whose_second_clause_leaves_it_for_code(chunks):
    sock = _Socket(chunks)
    while True:
        try:
            data = sock.recv()
            if not data:
                break
            sock.process(data)
        except InterruptedError:
            continue
        except BlockingIOError:
            sock.process(b"blocked")
            break
    sock.process(b"end")
    return sock.seen


class _Slots:
    def __init__(self, **names):
        self.__dict__.update(names)


@cases(((_Slots(a=1),), ("a",)), ((_Slots(a=None),), ("a",)), ((_Slots(),), ("a",)),
       ((_Slots(a=1, b=2), _Slots(b=None)), ("a", "b")), ((), ()))
def return_before_a_break_in_a_nested_loop(mro, methods):
    for method in methods:
        for B in mro:
            if method in B.__dict__:
                if B.__dict__[method] is None:
                    return NotImplemented
                break
        else:
            return NotImplemented
    return True


@cases((["", "ab", "c"],), ([""],), ([],))
def code_after_a_loop_whose_else_returns(values):
    values = sorted(values, key=len, reverse=True)
    for value in values:
        if value != "":
            break
    else:
        return ""
    joined = "|".join(v.upper() for v in values)
    LOG.append(joined)
    return "(%s)" % joined


@cases((["pip-1.whl", "x.txt", "setuptools-2.whl", "other-3.whl"], ("pip", "setuptools")),
       ([], ("pip",)), (["pip-1.whl"], ()))
def break_code_after_an_inner_loop_whose_else_continues(filenames, names):
    found = {}
    for filename in filenames:
        if not filename.endswith(".whl"):
            continue
        for name in names:
            prefix = name + "-"
            if filename.startswith(prefix):
                break
        else:
            continue
        found[name] = filename.removeprefix(prefix).partition("-")[0]
        LOG.append(name)
    return found


@cases(({1: 0}, [1, 2, 3]), ({}, []), ({2: 5}, [2, 2]))
def continue_when_a_key_is_there(target, keys):
    for key in keys:
        if key in target:
            continue
        target[key] = len(target)
    return target


@cases(({1: 0}, [1, 2, 3]), ({}, []), ({2: 5}, [2, 2]))
def body_when_a_key_is_not_there(target, keys):
    for key in keys:
        if key not in target:
            target[key] = len(target)
    return target


@cases(([None, "a", "a", "b"],), ([],))
def continue_on_either_of_two_tests(prefixes):
    seen = set()
    out = []
    for prefix in prefixes:
        if not prefix or prefix in seen:
            continue
        seen.add(prefix)
        out.append(prefix.upper())
    return out


@cases(([1, "a", 2], True), ([1, "a"], False))
def body_on_either_of_two_tests_at_the_end(items, only_ints):
    out = []
    for item in items:
        is_int = isinstance(item, int)
        if is_int or not only_ints:
            out.append(item)
    return out


def _values_of(mapping):
    for obj in list(mapping.values()):
        nested = False
        try:
            obj.items
        except AttributeError:
            pass
        else:
            nested = True
            yield from _values_of(obj)
        if not nested:
            yield obj


@cases(({"a": 1, "b": {"c": 2}},), ({},))
def generator_whose_last_test_is_negated(mapping):
    return list(_values_of(mapping))


@cases(([int, bool, object], {int: 1, object: 2}), ([str], {}), ([bool, int], {bool: 1, int: 2}))
def break_code_that_may_raise_before_a_return(mro, registry):
    match = None
    for t in mro:
        if match is not None:
            if t in registry and not issubclass(match, t):
                raise RuntimeError("ambiguous")
            break
        if t in registry:
            match = t
    return registry.get(match)


@cases(([5, 3, 8, 1], 0, 3), ([1, 2], 0, 1), ([], 0, 0))
def continue_after_an_arm_then_break(heap, startpos, pos):
    if not heap:
        return heap
    newitem = heap[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if newitem < parent:
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem
    return heap


@cases(([1, -2, 3, -4],), ([],))
def continue_after_an_arm_then_more_code(items):
    out = []
    for item in items:
        if item < 0:
            out.append(-item)
            continue
        out.append(item * 10)
    return out


@cases(([1, 2, 3], None, 2), ([1, 2, 3], 2, 3), ([1, 2, 3], None, 9), ([1, 2], 5, 2))
def while_loop_with_an_or_test(seq, stop, value):
    # (3.12+ copies the test to the loop's end, each ``or`` branch jumping back alone)
    i = 0
    while stop is None or i < stop:
        try:
            v = seq[i]
        except IndexError:
            break
        if v == value:
            return i
        i += 1
    raise ValueError(value)


@cases(([1, 2], 3), ([1, 2, 3], 5), ([], 0))
def while_loop_with_an_and_test(items, limit):
    total = 0
    while items and total < limit:
        total += items.pop()
    return total, items


@cases(([3, 0, 5],), ([0],), ([1, 2],))
def while_true_whose_first_statement_returns(queue):
    # a test only at the loop's top: ``while True:`` and an ``if``, not ``while not c:``
    while True:
        if not queue or queue[0] == 0:
            return "done", queue
        queue.pop(0)
        LOG.append(len(queue))


@cases((5, 2), (0, 1), (3, 3))
def while_true_that_breaks_first(n, step):
    seen = []
    while True:
        if n <= 0:
            break
        seen.append(n)
        n -= step
    return seen


@cases(("ab\ncd",), ("x\r",), ("",), ("abc",))
def break_on_an_or_test_then_code_after_the_loop(text):
    chars = list(text)
    pw = ""
    while 1:
        c = chars.pop(0) if chars else "\n"
        if c == "\r" or c == "\n":
            break
        pw = pw + c
    LOG.append(pw)
    return pw


@cases(([1, 2, 3], 3), ([1, None, 5], 5), ([4], 9))
def break_to_code_after_a_while_true(items, stop):
    # the break jumps to the code after the loop, written there, not in the loop
    i = 0
    while 1:
        item = items[i] if i < len(items) else stop
        if item is None:
            return "none"
        if item == stop:
            break
        i += 1
    LOG.append(i)


@cases(([([1, 2], [3]), ([], [4, 5])],), ([],))
def while_loops_with_or_tests_inside_a_for(pairs):
    # an inner loop's test copied to its end, the for loop's iterator under it
    out = []
    for a, b in pairs:
        while a or b:
            if a:
                out.append(a.pop())
            else:
                out.append(b.pop())
        while out and out[-1] > 4:
            out.pop()
    return out


@cases(('ab"', False), ("a\\b\"", False), ("a\nb\"", True), ("a\nb\"", False))
def written_continue_in_an_else_then_more_code(text, strict):
    # ``else: ...; continue`` in an ``elif`` arm, then the loop's own code after it
    out = []
    i = 0
    while 1:
        ch = text[i]
        i += 1
        if ch == '"':
            break
        elif ch != "\\":
            if strict and ch == "\n":
                raise ValueError(i)
            else:
                out.append(ch)
                continue
        out.append(text[i].upper())
        i += 1
    return "".join(out)


def _counted(items):
    # an iterable whose creation is logged when it is made (not when first read: a
    # generator would log lazily): the loop must evaluate it once
    LOG.append("iter")
    return list(items)


@cases(([3, 4],), ([],))
def for_whose_body_always_returns(items):
    # no jump back: the loop's test is entered once, from before it
    for key in _counted(items):
        value = key * 2
        return key, value
    raise KeyError


@cases(([3, 4],), ([],))
def for_else_raise_whose_body_returns(items):
    for key in _counted(items):
        return (key, items.pop())
    else:
        raise KeyError("empty")


@cases(([0, 4],), ([5],), ([],))
def for_whose_body_returns_or_raises(items):
    for x in _counted(items):
        if x:
            return x
        raise ValueError(x)
    return None


@cases(([["a", "1"], ["2"]],), ([[], ["x"]],), ([],))
def for_that_breaks_at_once_inside_a_loop(rows):
    out = []
    for row in rows:
        for cell in _counted(row):
            break
        else:
            cell = None
        try:
            out.append(int(cell))
        except (TypeError, ValueError):
            out.append(cell)
    return out


class _Buffer:
    """A context manager over a list that logs entering and leaving."""

    def __init__(self, items):
        self.items = items

    def __enter__(self):
        LOG.append("enter")
        return self.items

    def __exit__(self, *exc):
        LOG.append(("exit", exc[0]))
        return False


@cases(([5, 2, 0], 4), ([5, 5], 4), ([0], 4), ([1], 4), ([], 4))
def loop_in_a_with_whose_breaks_differ(chunks, length):
    # (shutil._copyfileobj_readinto) one break right away, one after an inner with:
    # both go to the with's exit, which the compiler ends with the function's return
    with _Buffer(list(chunks)) as buf:
        while True:
            n = buf.pop(0) if buf else 0
            if not n:
                break
            elif n < length:
                with _Buffer([n]) as small:
                    LOG.append(small)
                break
            else:
                LOG.append(n)


@cases(([3, 0, 5],), ([0, 0],), ([],), ([2, 3, 1],))
def while_in_a_with_whose_continue_skips_its_copied_test(reads):
    # (platform.libc_ver) the compiler copies the while test to the loop's end, under the
    # with's exit; a continue goes to the test at the top
    with _Buffer(list(reads)) as pending:
        pos = 0
        while pos < len(pending) + 2:
            m = pending.pop(0) if pending else None
            if not m or m == 3:
                chunk = len(pending)
                if chunk:
                    pos = 0
                    continue
                if not m:
                    break
            pos = m + pos
    return pos


class _Finder:
    def __init__(self, spec):
        if spec != "missing":
            self.find_spec = lambda name: spec if spec != "raise" else {}[name]


@cases(([_Finder(None), _Finder("missing"), _Finder("s")], "n"), ([_Finder("missing")], "n"),
       ([_Finder("raise")], "n"), ([], "n"))
def continue_in_a_clause_in_a_with_in_a_loop(finders, name):
    # (importlib._bootstrap._find_spec) the continue runs the with's exit, in a copy of
    # its own laid out with the clause
    for finder in finders:
        with _Buffer([name]):
            try:
                find_spec = finder.find_spec
            except AttributeError:
                continue
            else:
                spec = find_spec(name)
        if spec is not None:
            return spec
    else:
        return None


@cases(([_Finder(None), _Finder("missing"), _Finder("s")], "n"), ([_Finder("missing")], "n"))
def break_in_a_clause_in_a_with_in_a_loop(finders, name):
    found = []
    for finder in finders:
        with _Buffer([name]):
            try:
                found.append(finder.find_spec(name))
            except AttributeError:
                break
        LOG.append(len(found))
    LOG.append("done")
    return found


class _Reader:
    def __init__(self, ready, fail_at=None):
        self.ready, self.fail_at, self.calls = ready, fail_at, 0

    def poll(self):
        self.calls += 1
        if self.calls == self.fail_at:
            raise EOFError(self.calls)
        return self.calls <= self.ready


@cases((_Reader(2),), (_Reader(20),), (_Reader(5, fail_at=3),), (_Reader(0),))
def for_with_a_break_in_a_try(reader):
    # (multiprocessing.pool.Pool._handle_results) the break's jump lies outside the
    # try's range, in a block of its own after the pop of the iterator
    got = []
    try:
        for i in range(10):
            if not reader.poll():
                break
            got.append(i)
    except (OSError, EOFError):
        pass
    LOG.append(len(got))
    return got


@cases(([1, 2, 3], {1: "a", 3: "c"}, True), ([1, 2], {2: "b"}, False), ([], {}, True))
def continue_in_an_if_in_a_clause_in_a_with(pids, callbacks, forks):
    # (asyncio.unix_events.FastChildWatcher._do_waitpid_all) one arm of the clause
    # continues through the with's exit, the other goes on after the try
    pending = list(pids)
    zombies = {}
    while pending:
        pid = pending.pop()
        with _Buffer([pid]):
            try:
                callback = callbacks.pop(pid)
            except KeyError:
                if forks:
                    zombies[pid] = len(pending)
                    continue
                callback = None
        if callback is None:
            LOG.append(("unknown", pid))
        else:
            LOG.append((callback, pid))
    return zombies


class _Waiter:
    def __init__(self, turns):
        self.turns = turns

    def ready(self):
        self.turns -= 1
        if self.turns < -3:
            raise TimeoutError(self.turns)
        return self.turns <= 0


@cases((_Waiter(3),), (_Waiter(0),), (_Waiter(-5),))
def return_from_a_with_in_an_endless_loop_in_a_with(waiter):
    # (importlib._bootstrap._ModuleLock.acquire) the return runs the inner with's exit,
    # then the outer one's: the loop has no other way out
    with _Buffer(["outer"]):
        while True:
            with _Buffer(["inner"]):
                if waiter.ready():
                    return True
                LOG.append(waiter.turns)
            LOG.append("wait")


@cases((_Waiter(3),), (_Waiter(0),), (_Waiter(-2),))
def while_whose_break_returns_what_its_end_returns(waiter):
    # (asyncio.locks.Semaphore.acquire) 3.12+ copies the return after the loop into
    # the break and into the loop's last test: the break stays a statement of its own
    waiter.value = 2
    while waiter.value > 0:
        waiter.value -= 1
        if not waiter.ready():
            break
    return True


@cases(([("abc", 1), ("abd", 2), ("x", 3)],), ([],), ([("", 0), ("aa", 1), ("a", 2)],))
def while_in_a_for_whose_break_code_continues_the_for(items):
    # (pstats.Stats.get_sort_arg_defs) 3.12+ gives the while's exit a jump of its own to
    # the for's head; the break's code jumps there itself: it is the while's code
    found, bad = {}, {}
    for word, tup in items:
        fragment = word
        while fragment:
            if fragment in found:
                bad[fragment] = 0
                break
            found[fragment] = tup
            fragment = fragment[:-1]
    return found, bad


@cases(({"a": 1, "b": 2}, {}), ({"a": 1, "b": 2}, {"b": "late"}), ({"a": 1}, {"a": True}),
       ({}, {"x": 1}))
def loop_whose_last_statement_raises_after_code_of_its_own(fields, errors):
    # (dataclasses._FuncBuilder.add_fns_to_class) the raise and the code before it are
    # the loop's, not code after a break with an ``else: return``
    for name, value in fields.items():
        LOG.append(name)
        if name in errors:
            msg = f"cannot set {name} to {value}"
            if errors[name] is not True:
                msg = f"{msg} ({errors[name]})"
            raise TypeError(msg)


@cases((["pip-1.whl", "x.txt", "setuptools-2.whl", "other-3.whl"], ("pip", "setuptools")),
       ([], ("pip",)), (["pip-1.whl"], ()))
def break_code_after_an_inner_loop_that_ends_the_outer_body(filenames, names):
    # (ensurepip._find_packages) the code after the inner loop's for-else, laid out
    # after it: 3.10 reads the break and that code as one block
    found = {}
    for filename in filenames:
        if not filename.endswith(".whl"):
            continue
        for name in names:
            prefix = name + "-"
            if filename.startswith(prefix):
                break
        else:
            continue
        version = filename.removeprefix(prefix).partition("-")[0]
        found[name] = (version, filename)
    return found


@cases((True, ["a", "b", "**"]), (False, ["a"]), (True, []), (True, ["x", "**", "y"]))
def while_loop_as_the_body_of_an_if(follow, parts):
    # (glob._Globber.recursive_selector) the test before the loop folds the if's test
    # and the while's into one ``and``; the while's test is copied to its end alone
    part = "p"
    if follow:
        while parts and parts[-1] != "**":
            part += "/" + parts.pop()
    if not follow:
        while parts:
            LOG.append(parts.pop())
    return part, parts


@cases((0o754, (((4, "r"),), ((2, "w"), (8, "x")), ((1, "s"),))), (0, (((1, "a"),),)),
       (3, (((1, "a"), (2, "b")), ((4, "c"),))))
def break_code_in_a_loop_whose_else_is_an_if(mode, table):
    # (stat.filemode) the break's code is laid out in the loop and goes on to the
    # enclosing loop's head, as does each arm of the else's if
    perm = []
    for index, tab in enumerate(table):
        for bit, char in tab:
            if mode & bit == bit:
                perm.append(char)
                break
        else:
            if index == 0:
                perm.append("?")
            else:
                perm.append("-")
    return "".join(perm)


def _member(name, members):
    LOG.append(("member", name))
    return members.get(name)


@cases((["/lib", "/a", "/b"], "x", {"/b/libx.a": {"x": 1}}), ([], "y", {}),
       (["/a"], "x", {"/a/libx.a": {}}), (["/lib"], "z", {"/lib/libz.a": {"z": 2}}))
def loop_whose_last_statement_returns_from_both_arms(paths, name, archives):
    # (ctypes._aix.find_shared) the code before the two returns is the loop's: more
    # than the one block of a return the compiler could have copied into a break
    for dir in paths:
        if dir == "/lib":
            continue
        base = "lib%s.a" % name
        archive = dir + "/" + base
        if archive in archives:
            members = archives[archive]
            member = _member(name, members)
            if member is not None:
                return (base, member)
            else:
                return (None, None)
    return (None, None)


class _Kind:
    pass


class _DataKind:
    __repr__ = object.__repr__
    __dataclass_fields__ = {}


@cases(([int, bool],), ([_Kind, _DataKind],), ([],), ([object],))
def nested_loop_whose_if_chain_returns_in_places(bases):
    # (enum.EnumType._find_data_repr_) the inner loop's returns are its own code; its
    # one exit is the natural one (the state machine once, "several exits")
    for chain in bases:
        for base in chain.__mro__:
            if base is object:
                continue
            elif issubclass(base, bool):
                return "bool"
            elif "__repr__" in base.__dict__:
                if "__dataclass_fields__" in base.__dict__ and "__dataclass_params__" in base.__dict__:
                    return "dataclass"
                else:
                    return base.__dict__["__repr__"]
    return None


@cases(([(1, 2), (0, 1)], 3, [0, 5, 6]), ([(4, 1)], 3, [1, 2]), ([], 1, []),
       ([(0, 0)], 5, [7, 8]))
def if_whose_else_raises_then_more_code_in_a_loop(items, buflen, buf):
    # (gettext.GNUTranslations._parse) the body jumps over the else's raise to the code
    # after the if: a block boundary, with the loop's iterator under it
    out = []
    for mend, tend in items:
        if mend < buflen and tend < buflen:
            msg = buf[:mend]
            tmsg = buf[:tend]
        else:
            raise OSError(0, "File is corrupt")
        if not msg:
            out.append(tmsg)
        out.append(msg)
    return out


_LINKS = {"a": "b", "b": "c", "c": "c/", "d": 0, "e": "x"}


def _readlink(path):
    if path == "x":
        raise ValueError(path)
    target = _LINKS[path]
    if target == 0:
        raise OSError(path)
    return target


@cases(("a", set()), ("d", set()), ("d", {"seen"}), ("e", set()), ("q", set()),
       ("c", {"c/"}))
def break_in_a_try_in_a_while_before_a_copied_return(path, seen):
    # 3.12+ copies the short 'return path' into the try body: the break is only a NOP
    while path not in seen:
        seen.add(path)
        try:
            old_path = path
            path = _readlink(path)
            if path not in _LINKS:
                path = old_path
                break
            path = path + ""
        except OSError:
            if seen:
                path = old_path
                break
            raise
        except ValueError:
            break
    return path


@cases((["a", "login", "u", "end", "x"],), (["end"],), (["#", "password", "p", "stop"],),
       (["bad"],))
def break_code_of_an_endless_loop_then_more_code(tokens):
    # the break's own code stays in the loop: the compiler lays it out there and jumps
    # on past the loop to the code after it
    it = iter(tokens)
    hosts = {}
    login = password = ""
    while True:
        tt = next(it, "end")
        if tt.startswith("#"):
            continue
        if tt in {"end", "stop"}:
            hosts["h"] = (login, password)
            LOG.append(tt)
            break
        elif tt == "login":
            login = next(it)
        elif tt == "password":
            password = next(it)
        elif tt == "a":
            pass
        else:
            raise ValueError(tt)
    LOG.append(len(hosts))
    return hosts


@cases((["ab\ncd", "x"], True, None), (["ab", "c\r", "\nd"], False, None),
       (["", "q"], True, None), (["abc"], True, 4), (["a\r\nb"], False, None))
def endless_loop_whose_every_exit_is_a_copied_return(chunks, keepends, size):
    # 3.12+ copies the short 'return line' after the loop into every break: no way out
    # of the loop jumps to the original, which the compiler then drops
    it = iter(chunks)
    line = ""
    while True:
        data = next(it, "")
        if data:
            if data.endswith("\r") or data.startswith("\n"):
                data += "|"
        line += data
        lines = line.splitlines(keepends=True)
        if lines:
            if len(lines) > 1:
                line = lines[0]
                if not keepends:
                    line = line.splitlines()[0]
                break
            first = lines[0]
            bare = lines[0].splitlines()[0] if lines[0].strip() else ""
            if first != bare:
                if keepends:
                    line = first
                else:
                    line = bare
                break
        if not data or size is not None:
            if line and not keepends:
                line = line.upper()
            break
    return line


@cases((["LANG", "LANGUAGE"], {"LANGUAGE": "de:fr"}), (["LANGUAGE"], {"LANGUAGE": "de:fr"}),
       (["X"], {}), ([], {}), (["LANG"], {"LANG": "en"}))
def break_code_with_an_if_then_a_for_else(envvars, env):
    # the break's own code holds an 'if': laid out in the loop, it jumps past the
    # 'else' to the code after the loop
    for variable in envvars:
        localename = env.get(variable)
        if localename:
            if variable == "LANGUAGE":
                localename = localename.split(":")[0]
            break
    else:
        localename = "C"
    return localename.upper()


class _Frame:
    def __init__(self, name, back=None):
        self.name, self.f_back = name, back


_FRAMES = _Frame("c", _Frame("b", _Frame("a")))


@cases((_FRAMES, None), (_FRAMES, "b"), (None, "a"), (_FRAMES.f_back, "c"))
def while_not_none_with_a_break(f, stop):
    # 3.11 tests 'f is not None' at the top by a jump on None and again at the end by
    # a jump back on not None: one test, read both ways
    stack = []
    while f is not None:
        stack.append(f.name)
        if f.name == stop:
            break
        f = f.f_back
    return stack, f is None


@cases((["ab", "cd", " "], 5, [], "~"), (["ab", "cd"], 1, ["x"], "..."), ([], 3, [], "~"),
       (["abcdef"], 2, [], "~~~"), (["a", " "], 9, ["pre"], "+"))
def while_else_whose_break_code_ends_the_outer_loop(cur_line, width, lines, placeholder):
    # the inner loop's break code (and its else) end the outer loop, whose code after it
    # is a short return: 3.14 copies that return into both
    while True:
        cur_len = sum(map(len, cur_line))
        while cur_line:
            if cur_line[-1].strip() and cur_len + len(placeholder) <= width:
                cur_line.append(placeholder)
                lines.append("".join(cur_line))
                break
            cur_len -= len(cur_line[-1])
            del cur_line[-1]
        else:
            if lines:
                prev_line = lines[-1].rstrip()
                if len(prev_line) + len(placeholder) <= width:
                    lines[-1] = prev_line + placeholder
                    break
            lines.append(placeholder.lstrip())
        break
    return lines


@cases(([1, 1, 2, 5], [1, 3, 3, 5, 6]), ([], [1]), ([2, 2], [2, 2]), ([1, 3], [2]))
def while_loops_in_a_try_that_starts_an_endless_loop(expected, actual):
    # (3.12: the jump back goes into the try's first test; each inner loop's copied
    # test leaves the try by a jump of its own, the test before it straight)
    i = j = 0
    missing = []
    unexpected = []
    while True:
        try:
            e = expected[i]
            a = actual[j]
            if e < a:
                missing.append(e)
                i += 1
                while expected[i] == e:
                    i += 1
            elif e > a:
                unexpected.append(a)
                j += 1
                while actual[j] == a:
                    j += 1
            else:
                i += 1
                try:
                    while expected[i] == e:
                        i += 1
                finally:
                    j += 1
                    while actual[j] == a:
                        j += 1
        except IndexError:
            missing.extend(expected[i:])
            unexpected.extend(actual[j:])
            break
    return missing, unexpected


@cases(([1, 2, 3], 0), ([], 0), ([5], 0))
def break_from_an_except_clause_of_an_endless_loop(xs, n):
    # (3.10, 3.12+: the compiler copies the return after the loop into the clause,
    # leaving the break its POP_EXCEPT; it reads back as the break, not as a return in
    # the clause and a continue at the end of the try body)
    out = []
    while True:
        try:
            out.append(xs[n])
            n += 1
        except IndexError:
            out.append(n)
            break
    return out, n


@cases(([(1, "a"), (2, "b"), (4, "c"), (1, "d")], {"b"}), ([], set()), ([(1, "x")], {"x"}))
def break_on_the_line_of_its_test_before_a_return(tokens, kw):
    # (the break's POP_TOP of the iterator is on the test's line: its position tells
    # it from the test's, 3.11+; the compiler copies 'return vars' into the break)
    vars, last = [], None
    for ttype, token in tokens:
        if ttype == 4: break  # noqa: E701
        if token not in kw:
            vars.append((token, last))
        last = token
    return vars


class _Chunks:
    def __init__(self, sizes):
        self.sizes = list(sizes)
        self.left = None

    def next_size(self):
        if not self.sizes:
            raise EOFError("done")
        return self.sizes.pop(0)


@cases((_Chunks, [3, 2, 9], 7), (_Chunks, [1, None], 5), (_Chunks, [], 4), (_Chunks, [2], 1))
def returns_of_several_statements_from_an_endless_loop_in_a_try(make, sizes, want):
    # (each return's value is named inside the try and returned outside its range)
    src = make(sizes)
    total = 0
    try:
        while True:
            left = src.next_size()
            if left is None:
                return total
            if want <= left:
                n = min(want, left)
                src.left = left - n
                return total + n
            want -= left
            total += left
            src.left = 0
    except EOFError as e:
        raise ValueError(total) from e


def _parameter(value):
    if value[0] == "!":
        raise KeyError(value)
    return value[0], value[1:]


@cases(("ab;c",), ("a!b",), ("!",), ("",), ("!;x",))
def return_in_a_clause_written_like_the_return_after_the_loop(value):
    # (the same 'return out' twice: the one in the clause is the source's, on a line of
    # its own, not the compiler's copy of the one after the loop)
    out = []
    while value:
        try:
            token, value = _parameter(value)
            out.append(token)
        except KeyError:
            leader = None
            value = value[1:]
            if not value:
                out.append(leader)
                return out
            out.append("skip")
        if value and value[0] != ";":
            out.append("junk")
    return out


def _reader(chunks):
    def read(n):
        chunk = chunks.pop(0) if chunks else b""
        if chunk is None:
            raise BlockingIOError(n)
        return chunk[:n]
    return read


@cases(((b"ab", b"cd"), 4), ((None,), 2), ((b"x", None), 2), ((), 1))
def breaks_from_a_clause_and_the_body_before_a_copied_return(chunks, n):
    # (3.12+: both breaks get a copy of the return, one after the clause's POP_EXCEPT,
    # laid out after the loop as the clause is)
    read = _reader(list(chunks))
    result = bytearray()
    while True:
        try:
            chunk = read(n)
        except BlockingIOError:
            if result:
                break
            return
        if not chunk:
            break
        result += chunk
    return bytes(result)


class _Zone:
    pass


@cases(([1, 1, 0, 1], [5, 6, 7, 8], None), ([1, 1], [5, 6], b"x"), ([], [], b""),
       ([1], [], b""))
def for_else_whose_break_code_is_straight(isdst, infos, tz):
    # (the break's own statement is laid out in the loop, before the else: it stays
    # there; the code after the loop is not copied into the else)
    self = _Zone()
    for i in range(len(isdst)):
        if not isdst[i]:
            self.before = infos[i]
            break
    else:
        if infos:
            self.before = infos[0]
        else:
            self.before = None
    if tz is not None and tz != b"":
        self.after = tz
    else:
        self.after = infos[-1] if infos else None
    return vars(self)


@cases(([[1, 2], [2, 3]],), ([[1], [1]],), ([[1, 2], [2, 1]],), ([],))
def inner_for_else_whose_break_code_is_the_outer_loops_last(sequences):
    # (functools._c3_merge) the inner break's own statement, laid out before the
    # inner loop's else, goes on straight to the outer loop's next turn
    result = []
    while True:
        sequences = [s for s in sequences if s]
        if not sequences:
            return result
        for s1 in sequences:
            candidate = s1[0]
            for s2 in sequences:
                if candidate in s2[1:]:
                    candidate = None
                    break
            else:
                break
        if candidate is None:
            raise RuntimeError("inconsistent")
        result.append(candidate)
        for seq in sequences:
            if seq[0] == candidate:
                del seq[0]


class _Fields:
    atomends = "()<>@,;:\\\".[]"

    def __init__(self, field):
        self.field = field
        self.pos = 0

    def gotonext(self):
        start = self.pos
        while self.pos < len(self.field) and self.field[self.pos] == " ":
            self.pos += 1
        return self.field[start:self.pos]

    def getatom(self):
        start = self.pos
        while self.pos < len(self.field) and self.field[self.pos] not in self.atomends + " ":
            self.pos += 1
        return self.field[start:self.pos]


@cases(("ab.cd@x",), ("a b ,z",), ("",), ("a. b",), ("x ;",))
def while_loop_whose_break_code_goes_on_to_its_end(field):
    # (email._parseaddr getaddrspec) the break's code, an if of its own, is laid out
    # in the loop and goes on to where the loop ends anyway: no else
    self = _Fields(field)
    aslist = []
    self.gotonext()
    while self.pos < len(self.field):
        preserve_ws = True
        if self.field[self.pos] == ".":
            aslist.append(".")
            self.pos += 1
            preserve_ws = False
        elif self.field[self.pos] in self.atomends:
            if aslist and not aslist[-1].strip():
                aslist.pop()
            break
        else:
            aslist.append(self.getatom())
        ws = self.gotonext()
        if preserve_ws and ws:
            aslist.append(ws)
    if self.pos >= len(self.field) or self.field[self.pos] != "@":
        return "".join(aslist)
    return "".join(aslist) + "@"


class _Lock:
    def __init__(self, count, owner):
        self.count, self.owner, self.waits = count, owner, 0

    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append("exit")
        return False

    def wait(self):
        self.waits += 1
        self.count = max(0, self.count - 1)
        if self.waits > 3:
            raise TimeoutError(self.waits)


@cases((0, 1, 1), (2, 5, 1), (9, 5, 1))
def return_from_a_with_in_an_endless_loop_in_a_try_finally(count, owner, tid):
    # (importlib._bootstrap._ModuleLock.acquire) the return runs the with's exit and
    # the finally's copy: it stays a return, not a break to code after the loop
    lock = _Lock(count, owner)
    blocking = {tid: lock}
    try:
        while True:
            with lock:
                if lock.count == 0 or lock.owner == tid:
                    lock.owner = tid
                    lock.count += 1
                    return True
                if lock.waits > 5:
                    raise RuntimeError("deadlock detected by %r" % tid)
                if lock.count > 3:
                    lock.waits += 1
            lock.wait()
            LOG.append(lock.count)
    finally:
        del blocking[tid]


class _Thread:
    def __init__(self, state):
        self.state = state


@cases(([1, 2, None, 3], _Thread(0)), ([1, 2], _Thread(2)), ([5], _Thread(1)),
       ([OSError, 1], _Thread(0)))
def assert_before_a_break_in_an_endless_loop(tasks, thread):
    # (the assert's test is the break's own code: the loop's one exit is after it)
    log = []
    items = iter(tasks)
    while 1:
        try:
            task = next(items)
            if task is OSError:
                raise OSError(task)
        except (OSError, StopIteration):
            return log
        if thread.state != 0:
            assert thread.state == 2, "not terminated"
            log.append("stopped")
            break
        if task is None:
            break
        log.append(task)
    log.append("after")
    return log


@cases(([1, 5, 0, 7],), ([],), ([3, 3, 9],))
def continue_ending_the_last_if_of_a_loop_body(xs):
    # (3.10, 3.11 give the written 'continue' a jump of its own)
    out = []
    for i, x in enumerate(xs):
        if x in (1, 3):
            out.append(("store", x))
            continue
        if x > 2 and i >= 1:
            if x == 5:
                out.append(("five", i))
            else:
                out.append(("other", i))
            continue
    return out


@cases(([1, 0, 5, 2, 9], lambda p: p > 4), ([2, 4], lambda p: p == 4), ([], bool),
       ([7, 0, 0, 3], lambda p: True))
def break_after_an_if_holding_a_loop(it, stop):
    # (the one 'break' after the 'if' is where both its arms and the inner loop's
    # ways out go; pathlib's parse_parts)
    it = iter(it)
    out = []
    for p in it:
        if not p:
            continue
        out.append(p)
        if stop(p):
            if p > 3:
                for q in it:
                    out.append(-q)
                    if q:
                        break
            break
    out.reverse()
    return out, list(it)


class _Opener:
    def __init__(self, free):
        self.free = free

    def open(self, name):
        LOG.append(name)
        if name not in self.free:
            raise OSError(name)
        return len(name)


@cases((_Opener({"pa1"}),), (_Opener(set()),), (_Opener({"qa0", "pb1"}),))
def return_after_a_try_that_continues_in_nested_loops(opener):
    # (3.10, 3.11: the value is computed before the iterators are dropped, a return
    # written in the loops, not a break to code after them; pty._open_terminal)
    for x in "pq":
        for y in "ab":
            for z in "01":
                try:
                    fd = opener.open(x + y + z)
                except OSError:
                    continue
                return fd, x + y + z
    raise OSError("out of devices")


@cases(("a/b/c", 3, 3), ("abcdef/gh", 4, 9), ("x", 1, 1), ("aa/bb/cc/dd", 5, 5))
def break_to_a_return_after_a_for_else_that_raises(name, most_prefix, most_name):
    # (3.10 copies the return into the break and drops the one after the loop)
    components = name.split("/")
    for i in range(1, len(components)):
        prefix = "/".join(components[:i])
        name = "/".join(components[i:])
        if len(prefix) <= most_prefix and \
                len(name) <= most_name:
            break
    else:
        raise ValueError("name is too long")

    return prefix, name


class _Maker:
    def __init__(self, taken):
        self.taken = taken

    def make(self, i):
        LOG.append(i)
        if i in self.taken:
            raise FileExistsError(i)
        return i * 10


@cases((_Maker({0, 1}), 4), (_Maker(set()), 2), (_Maker({0, 1, 2}), 3), (_Maker({5}), 0))
def break_in_the_else_of_a_try_whose_clause_passes(maker, n):
    # (3.10: the 'else: break' is laid out after the clause; a break in the body is not)
    for i in range(n):
        try:
            sl = maker.make(i)
        except FileExistsError:
            pass
        else:
            break
    LOG.append(i if n else None)
    return maker.taken


@cases(([[1, 2], [3]],), ([[], [4]],), ([],))
def break_in_a_try_body_of_a_while_else(stacks):
    # (the body's break is the body's; a while-else whose loop the break leaves,
    # nested as in graphlib's _find_cycle)
    got = []
    for start in range(2):
        its = [iter(s).__next__ for s in stacks]
        while True:
            got.append(start)
            while its:
                try:
                    got.append(its[-1]())
                    break
                except StopIteration:
                    its.pop()
            else:
                break
            if len(got) > 6:
                return got
    return got


@cases((["a", "rc", "b"],), (["rc", "bad"],), ([],), (["x", "y"],))
def continue_after_a_try_whose_clause_raises(items):
    # (3.10: the continue after the try is laid out after the clause; one in the body
    # jumps back in place)
    for item in items:
        if item == "a":
            LOG.append("a")
        elif item.startswith("r"):
            try:
                LOG.append(int(item, 36))
            except ValueError as exc:
                raise KeyError(item) from exc
            continue
        elif item == "bad":
            raise ValueError(item)
        LOG.append(item)
    return len(LOG)


@cases((3,), (0,), (7,))
def continue_after_a_try_in_a_while_loop(n):
    i = 0
    while i < n:
        i += 1
        if i % 2:
            try:
                LOG.append(10 // (i - 5))
            except ZeroDivisionError:
                raise RuntimeError(i)
            continue
        LOG.append(i)
    return i


@cases(({"ab": 1, "abc": 2, "x": 3},), ({},), ({"": 0, "q": 1},))
def while_ending_a_for_body_with_breaks_after_code(defaults):
    # (pstats.Stats.get_sort_arg_defs: 3.10 sends the breaks and the test's way out
    # to one jump back to the for)
    table = {}
    bad = {}
    for word, tup in defaults.items():
        fragment = word
        while fragment:
            if not fragment:
                break
            if fragment in table:
                bad[fragment] = 0
                break
            table[fragment] = tup
            fragment = fragment[:-1]
    for word in bad:
        del table[word]
    return table


@cases(([1, None, "a", None],), ([],), ([None],), ([2, 3],))
def one_line_continue_on_an_is_test(args):
    # (imaplib.IMAP4._command: 3.10 has no columns to tell 'if a is None: continue'
    # from 'if a is not None:' around the rest; the operator the bytecode holds does)
    data = []
    for arg in args:
        if arg is None: continue
        if arg in data:
            continue
        if isinstance(arg, str):
            arg = arg * 2
        data.append(arg)
    return data


def _stat_of(modes):
    def stat(path):
        if path not in modes:
            raise OSError(path)
        return modes[path]
    return stat


@cases((_stat_of({"a": 0o100644}), "a/b/c"), (_stat_of({"a/b": 0o40755}), "a/b/c"),
       (_stat_of({}), "a/b"), (_stat_of({"": 0o100000}), "x"))
def else_that_raises_then_breaks_an_endless_loop(stat, path):
    # (zipimport.zipimporter.__init__: the else's test is the loop's code on the way
    # to its break, not code after the loop)
    prefix = []
    while True:
        try:
            st = stat(path)
        except (OSError, ValueError):
            dirname, _, basename = path.rpartition("/")
            if dirname == path:
                raise ValueError("not a Zip file", path)
            path = dirname
            prefix.append(basename)
        else:
            if (st & 0o170000) != 0o100000:
                raise ValueError("not a file", path)
            break
    return prefix, path


@cases(([(0, 1), (2, 5), (1, 0), (0, 2)],), ([],), ([(2, 3), (0, 4)],), ([(1, 1)],))
def one_line_break_to_the_return_after_the_loop(items):
    # (cgitb.scanvars: 3.10 copies 'return out' into the break; the copy pops the
    # iterator first, a return in the loop computes its value first)
    out = []
    for ttype, token in items:
        if ttype == 1: break
        if ttype == 2:
            out.append(token)
        else:
            out.append(-token)
    return out


class _Flaky:
    def __init__(self, fails):
        self.fails = fails

    def __iter__(self):
        if self.fails:
            self.fails -= 1
            raise RuntimeError("changed size during iteration")
        return iter([3, 1, 2])


@cases((_Flaky(0),), (_Flaky(2),), (_Flaky(5),))
def else_break_of_a_try_in_an_endless_loop(source):
    # (asyncio.all_tasks: 3.10 lays the else's break out after the clause, which goes
    # back to the loop's head)
    i = 0
    while True:
        try:
            items = list(source)
        except RuntimeError:
            i += 1
            if i >= 4:
                raise
        else:
            break
    return sorted(items), i


@cases((["a", "b"], {"b": 2}), (["a"], {}), ([], {}), (["x", "y"], {"x": None}))
def return_ending_a_for_body_after_a_try_whose_clause_raises(names, table):
    # (distutils.dist.Distribution.get_command_class: the return is the loop's last
    # statement, on its last line; not a break's copy of code after the loop)
    found = {}
    for name in names:
        try:
            value = table[name]
        except KeyError:
            continue
        try:
            klass = value.bit_length
        except AttributeError:
            raise LookupError(name)
        found[name] = klass()
        return found
    raise LookupError("none of %r" % (names,))


@cases(([1, 2, 3, 4],), ([5, 0, 7],), ([],), ([2, 2],))
def if_that_passes_before_a_break(xs):
    # 'if c: pass' (its truth still tested) before a break, then another 'if c: break'
    seen = []
    for x in xs:
        if x % 2 == 0:
            if seen.append(x):
                pass
            break
        if x > 4:
            break
    seen.append("done")
    return seen


@cases(([[1, 3], [2, 9], [4]],), ([[7, 8, 1]],), ([],), ([[], [6, 3]],))
def breaks_of_an_inner_loop_that_run_code(rows):
    # (parso's _Context._analyze_names) each break runs code of its own; 3.12+ threads
    # the breaks at the end of the outer loop's body to that loop's head
    seen = []
    for row in rows:
        for x in row:
            if x % 2 == 0:
                if x > 3:
                    seen.append(("big", x))
                break
            if x > 5:
                seen.append(("odd", x))
                break
    return seen



@cases((0,), (3,), (6,))
def while_loops_whose_test_ends_in_a_true_constant(n):
    # the compiler knows 'or 1' is true: each test is run for its effect, at the head
    # and again at the end of the empty body, whose two ways both go back to the test
    seen = []

    def probe(k):
        seen.append(k)
        if len(seen) > n:
            raise LookupError(len(seen))
        return k

    try:
        while probe(len(seen)) > 1 > probe(-1) or 1:
            pass
    except LookupError as exc:
        seen.append(exc.args)
    try:
        while probe(len(seen)) or b"x":
            pass
    except LookupError as exc:
        seen.append(exc.args)
    return seen
