"""f-strings: conversions, format specs, nested fields, ``=`` specifier, str.format."""

from ._support import cases

LOG: list = []


@cases(("ann", 3), ("", 0))
def simple(name, count):
    return f"{name} has {count} items"


@cases(("x'y",), (3,), (None,))
def conversions(value):
    return f"{value!r} {value!s} {value!a} {value}"


@cases((3.14159,), (-2.5,), (1e10,))
def format_specs(x):
    return f"{x:.2f}|{x:10.3f}|{x:<10}|{x:>+12.1e}|{x:^10.1%}|{x:_>15,.2f}"


@cases((12, 8), (3, 2))
def nested_spec(value, width):
    precision = 2
    return f"{value:{width}}|{value:>{width}.{precision}f}|{value!r:>{width}}"


@cases((5,), (255,))
def integer_formats(n):
    return f"{n:b} {n:o} {n:x} {n:X} {n:#x} {n:08d} {n:,} {n:c}"


@cases((2, 3),)
def self_documenting(a, b):
    return f"{a=} {b = } {a + b=} {a=!r} {a*b=:>5}"


@cases(({"k": [1, 2]},),)
def expressions_inside(d):
    return f"{d['k'][0] + 1} {len(d)} {', '.join(map(str, d['k']))} {(lambda x: x * 2)(3)}"


@cases(("a",),)
def braces_and_escapes(s):
    return f"{{literal}} {s} {{{s}}} \n\t tab" + f"{'quoted'}" + f'{"double"}'


@cases((1, 2), (0, 0))
def conditional_in_fstring(a, b):
    return f"{'big' if a > b else 'small'} {a if a else 'zero'}"


@cases(("world",),)
def implicit_concatenation(name):
    return "hello " f"{name}" " and " f"{name.upper()}!" ""


@cases((7, "x"),)
def str_format_method(n, s):
    return "{} {}".format(n, s), "{1}{0}".format(n, s), "{n:>4}|{s!r}".format(n=n, s=s)


@cases((3,),)
def percent_formatting(n):
    return "%d items" % n, "%s-%r" % ("a", "b"), "%(x)05.1f" % {"x": n}


@cases(([1, 2, 3],),)
def fstring_with_comprehension(items):
    return f"{[x * 2 for x in items]} {sum(x for x in items)} {dict(a=1)}"


@cases((1.5,), (float("nan"),))
def fstring_in_loop(x):
    parts = []
    for i in range(3):
        parts.append(f"{i}:{x * i:.1f}")
    return "; ".join(parts)


@cases(("abc",),)
def fstring_multiline(s):
    return f"""first {s}
second {s.upper()}
third {len(s)}"""


@cases((None,), ("x",))
def fstring_raw_and_bytes(v):
    return rf"\d+{v}", rb"raw\n", b"bytes" + b"\x00\xff", f"{v!s:>6}"


@cases((10,),)
def format_builtin(n):
    return format(n, "04d"), format(n / 3, ".3g"), format("s", "^5"), str(n).rjust(5, "0")


@cases(("ann", 31), ("bob", 4))
def fstring_with_method_calls(name, age):
    LOG.append(f"{name.title()} ({age})")
    return f"{name.capitalize():>10}|{age:03}|{name[::-1]}"


@cases((2,),)
def fstring_with_dict_and_set(n):
    d = {"a": n}
    return f"{d} {set([n])} {d['a']} {n:{'>'}{n + 3}}"


@cases(("<abc>", "x"), ("[]", ""), ("(q)", [1]))
def negative_indexes_and_slices_in_replacement_fields(res, extra):
    # (3.14 folds a slice of constants into one constant only where '-1' is one already)
    return f"<{res[1:-1]} [{extra}]>", f"{res[-1]}", f"{res[::-1]!r:>8}"
