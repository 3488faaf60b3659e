"""Very long functions and deeply nested blocks."""

from ._support import cases

LOG: list = []


@cases((0,), (1,), (2,), (3,), (4,), (5,), (6,), (7,))
def deeply_nested_ifs(n):
    if n > 0:
        if n > 1:
            if n > 2:
                if n > 3:
                    if n > 4:
                        if n > 5:
                            if n > 6:
                                return "deepest"
                            return 6
                        return 5
                    return 4
                else:
                    return 3
            else:
                return 2
        else:
            return 1
    return 0


@cases((3,), (0,))
def deeply_nested_mixed(n):
    result = []
    for i in range(n):
        try:
            with open.__class__ and __import__("contextlib").nullcontext(i) as j:
                while j < n:
                    if j % 2:
                        for k in range(j):
                            try:
                                if k == 1:
                                    raise ValueError(k)
                                result.append((i, j, k))
                            except ValueError:
                                result.append("ve")
                            finally:
                                LOG.append(k)
                    else:
                        result.append(j)
                    j += 1
        except Exception as e:  # noqa: BLE001
            result.append(repr(e))
        else:
            result.append("else")
    return result


@cases((0,), (1,), (2,), (7,), (15,), (40,), (-3,))
def very_long_function(x):
    a = x + 1
    b = a * 2
    c = b - 3
    d = c // 2 if c else 0
    LOG.append(("start", a, b, c, d))
    if a > 10:
        e = a - 10
    else:
        e = 10 - a
    f = [e, d, c]
    for i in range(3):
        f.append(f[-1] + f[-2])
    g = sum(f)
    h = {}
    for i, v in enumerate(f):
        h[i] = v % 7
    if g % 2 == 0:
        LOG.append("even")
    else:
        LOG.append("odd")
    total = 0
    while total < 50 and g:
        total += abs(g) % 13 + 1
    try:
        ratio = total / (g - g)
    except ZeroDivisionError:
        ratio = None
    words = ["alpha", "beta", "gamma", "delta"]
    chosen = words[x % len(words)]
    if chosen.startswith("a"):
        chosen = chosen.upper()
    elif chosen.startswith("b"):
        chosen = chosen[::-1]
    elif chosen.startswith("g"):
        chosen = chosen * 2
    else:
        chosen = chosen.title()
    matrix = [[i * j for j in range(3)] for i in range(3)]
    diag = [matrix[i][i] for i in range(3)]
    flat = [v for row in matrix for v in row if v]
    k = 0
    while k < len(flat):
        if flat[k] > 2:
            break
        k += 1
    else:
        k = -1
    s = set(flat)
    s.discard(4)
    t = tuple(sorted(s))
    u = t[1:] if len(t) > 1 else t
    m = max(u) if u else None
    LOG.append(("middle", m, k))
    acc = []
    for word in words:
        if len(word) == 4:
            continue
        acc.append(word[0])
    key = "".join(acc)
    n1 = len(key) + x
    n2 = n1 * n1 - x
    n3 = n2 % 97
    n4 = n3 if n3 > 10 else n3 + 100
    n5 = (n4, n3, n2)
    flag = any(v > 1000 for v in n5)
    report = {
        "a": a,
        "e": e,
        "g": g,
        "h": h,
        "total": total,
        "ratio": ratio,
        "chosen": chosen,
        "diag": diag,
        "k": k,
        "u": u,
        "key": key,
        "n5": n5,
        "flag": flag,
    }
    if x < 0:
        raise ValueError(report["chosen"])
    LOG.append("end")
    return report


@cases((1,), (2,), (3,))
def nested_functions_deep(n):
    def a(x):
        def b(y):
            def c(z):
                def d(w):
                    return w + n

                return d(z) * 2

            return c(y) - 1

        return b(x) ** 2

    return a(n)


@cases(([[[[1, 2], [3]], [[4]]], [[[5, 6]]]],),)
def nested_loops_four_levels(data):
    total = 0
    for a in data:
        for b in a:
            for c in b:
                for d in c:
                    if d % 2 == 0:
                        continue
                    total += d
    return total


@cases((5,), (0,))
def long_elif_with_nested_loops(n):
    out = []
    for i in range(n):
        if i == 0:
            out.append("zero")
        elif i == 1:
            for j in range(2):
                out.append(("one", j))
        elif i == 2:
            j = 0
            while j < 2:
                out.append(("two", j))
                j += 1
        elif i == 3:
            try:
                out.append(1 // (i - 3))
            except ZeroDivisionError:
                out.append("three")
        else:
            out.append(i)
    return out


@cases((2,), (0,))
def nested_try_ladder(n):
    log = []
    try:
        log.append(1)
        try:
            log.append(2)
            try:
                log.append(3)
                try:
                    if n:
                        raise KeyError(n)
                finally:
                    log.append("f4")
            except IndexError:
                log.append("never")
            finally:
                log.append("f3")
        except KeyError:
            log.append("key")
            try:
                raise ValueError
            except ValueError:
                log.append("value")
        finally:
            log.append("f2")
    finally:
        log.append("f1")
    return log


@cases((4,),)
def many_locals(n):
    v0 = n
    v1 = v0 + 1
    v2 = v1 + v0
    v3 = v2 + v1
    v4 = v3 + v2
    v5 = v4 + v3
    v6 = v5 + v4
    v7 = v6 + v5
    v8 = v7 + v6
    v9 = v8 + v7
    v10 = v9 + v8
    v11 = v10 + v9
    v12 = v11 + v10
    v13 = v12 + v11
    v14 = v13 + v12
    v15 = v14 + v13
    v16 = v15 + v14
    v17 = v16 + v15
    v18 = v17 + v16
    v19 = v18 + v17
    v20 = v19 + v18
    return [v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15, v16,
            v17, v18, v19, v20]


@cases((3,), (8,))
def long_boolean_expression(n):
    return (
        (n > 1 and n < 5 or n == 8)
        and not (n % 3 == 1 and n > 5)
        and (n != 4 or n * 2 == 8)
        and (n in (1, 2, 3, 8) or n is None)
        and (str(n) != "x" or False)
    )


@cases((20,),)
def big_loop_body_with_breaks(limit):
    found = []
    i = 0
    while True:
        i += 1
        if i > limit:
            break
        if i % 2 == 0:
            if i % 4 == 0:
                found.append(("four", i))
                continue
            found.append(("two", i))
        elif i % 3 == 0:
            if i > 10:
                found.append(("three-big", i))
                if i > 14:
                    break
            else:
                found.append(("three", i))
        else:
            for j in range(i):
                if j > 2:
                    break
            else:
                found.append(("short", i))
    return found, i
