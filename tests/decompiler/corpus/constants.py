"""Constants: strings, bytes, floats (nan, inf, -0.0), complex, big ints, containers."""

from ._support import cases

LOG: list = []


@cases((0,), (1,))
def special_floats(i):
    values = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e309, -1e309, 1e-320]
    return values[i * 4:(i + 1) * 4]


@cases((1,),)
def negative_zero(n):
    z = -0.0
    return z, -z, 0.0 * -n, str(-0.0), 1 / 1e309, (-0.0, 0.0)


@cases((2,),)
def complex_numbers(n):
    a = 1j
    b = 2 + 3j
    c = -1.5j
    d = complex(0, -0.0)
    return a * n, b.real, b.imag, c, d, abs(3 + 4j), 1j ** 2


@cases((0,),)
def big_and_odd_ints(n):
    return (
        2**100 + n,
        -(2**63),
        0xFFFF_FFFF_FFFF_FFFF,
        0o777,
        0b1010_1010,
        1_000_000,
        10**30 // 7,
        -1,
    )


@cases((1,),)
def string_escapes(n):
    return [
        "tab\there",
        "newline\nhere",
        "quote ' and \"",
        "backslash \\",
        "\x00\x7f\u00e9\U0001f600",
        "\N{GREEK SMALL LETTER ALPHA}",
        r"raw \n stays",
        "",
        "a" * n,
        """triple "quoted" string""",
        '\'',
    ]


@cases((0,),)
def bytes_constants(n):
    return [b"", b"\x00\xff", b"abc\n", bytes(3), b"'\"", bytearray(b"xy"), rb"\d"]


@cases((1,),)
def unicode_identifiers_and_text(n):
    größe = n * 2
    名前 = "名前"
    return größe, 名前, len("héllo"), "straße".upper(), "İ".lower()


@cases((1,),)
def container_constants(n):
    t = (1, 2, (3, 4), "x", None, True, 1.5)
    fs = frozenset({1, 2})
    nested = ((1,), ((2,),), ())
    return t, fs, nested, {1, 2, 3}, [None, ...], {"a": (1, 2)}


@cases((0,), (1,))
def constant_folding_candidates(n):
    return (
        2 * 3 + 4,
        "a" + "b" * 3,
        (1, 2) + (3,),
        -(-5),
        not True,
        1 if True else 2,
        [1, 2][n],
        ~0,
        2**-1,
        (1 << 70) >> 68,
    )


@cases((3,),)
def ellipsis_and_none(n):
    e = ...
    return e, e is Ellipsis, None, n if e else None, type(...).__name__


@cases((1,),)
def constant_comparisons(n):
    return 0.1 + 0.2 == 0.3, 1 == 1.0, True == 1, "1" == 1, None == None, float("nan") == float("nan")  # noqa: E711


@cases((1,),)
def docstring_function(n):
    """This function has a docstring.

    It spans several lines.
    """
    return docstring_function.__doc__.splitlines()[0], n


@cases((2,),)
def string_first_statement_not_docstring(n):
    x = n
    "this is an expression statement, not a docstring"
    return x


@cases((1,),)
def long_string_constant(n):
    text = (
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
        "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis "
        "nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat."
    )
    return len(text) * n, text[:11]


@cases((0,),)
def many_constants(n):
    return [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
        255, 256, 257, 65535, 65536, -5, -6, 3.0, 2.5e-3, "s", b"b", None, True, False,
    ]


@cases((1,),)
def float_repr_edge_cases(n):
    return [0.1, 1 / 3, 1e16, 1e-7, 123456789.123456789, 5e-324, 1.7976931348623157e308, 2.0**0.5]


@cases((1,),)
def tuple_of_one_and_empty(n):
    return (), (n,), ((),), [()], tuple(), ("",), (("a",),)


@cases((1,),)
def ints_and_bools_distinct(n):
    return [True, 1, 1.0, False, 0, 0.0, -0.0], {1: "one", True: "true?"}, {0.0: "z", -0.0: "nz"}
