"""PEP 695 type parameters and ``type`` aliases, PEP 701 f-strings (Python 3.12+)."""

from ._support import cases

LOG: list = []

type Pair[T] = tuple[T, T]
type Json = dict[str, "Json"] | list["Json"] | str | int | None


@cases((1, 2), ("a", "b"))
def first[T](a: T, b: T) -> T:
    return a


@cases(([3, 1, 2],), ([],))
def largest[T: (int, str)](items: list[T]) -> T | None:
    return max(items) if items else None


@cases((3,),)
def generic_class_inside(n):
    class Box[T]:
        def __init__(self, item: T):
            self.item = item

        def get(self) -> T:
            return self.item

    b = Box[int](n)
    return b.get(), [p.__name__ for p in Box.__type_params__]


@cases((2,),)
def type_alias_statement(n):
    type Matrix = list[list[float]]
    type Mapping[K, V] = dict[K, V]
    return Matrix.__name__, Mapping.__type_params__[0].__name__, str(Matrix.__value__), n


@cases((1,),)
def module_level_aliases(n):
    return Pair.__name__, Pair.__type_params__[0].__name__, Json.__name__, n


@cases((4,),)
def generic_function_params(n):
    def ident[T, *Ts, **P](x: T) -> T:
        return x

    params = ident.__type_params__
    return ident(n), [type(p).__name__ for p in params]


@cases((2,),)
def bounded_type_var(n):
    def f[T: int](x: T) -> T:
        return x

    (t,) = f.__type_params__
    return t.__bound__.__name__, f(n)


@cases(("ann", ["x", "y"]),)
def pep701_fstrings(name, items):
    return (
        f"{name!r} {f"{name:>6}"} {", ".join(items)} {'\n'.join(items)!r}"
        f"{f"{f"{name}"}"}"
    )


@cases((3,),)
def fstring_with_comments_and_newlines(n):
    return f"{
        n  # the value
        * 2
    }|{[x
        for x in range(n)]}"


@cases((1, 2, 3), (3, 2, 1), (0, 0, 0))
def generic_class_with_chained_base(a, b, c):
    # the bases and keywords are computed inside the type parameter scope, where the
    # compiler copies the class creation into both arms of each comparison
    class Box[T](**({"k": 1} if a < b else {})):
        def __init_subclass__(cls, **kw):
            LOG.append(kw)

    class Sub[T](Box, **({"k": a} if a in (b, c) <= {1, 2, 3} else {})):
        pass

    class Long[**P](Sub, flag=a < b < c < 4):
        pass

    return Box.__type_params__[0].__name__, Sub.__name__, Long.__qualname__, LOG[-2:]


@cases(({"k": 1}, ""), ({}, "x"), (None, "y"))
def generic_class_with_a_merged_conditional_keyword(a, s):
    # each arm of the conditional ends in its own copy of the class creation
    class Box[**P](_Keywords, **{**a} if a else {"j": 0}):
        pass

    class Sub[*Ts](_Keywords, k=f"{s}" and (a if a else s)):
        pass

    return Box.__type_params__[0].__name__, Box.kw, Sub.kw


@cases((1,),)
def bound_names_its_own_parameter(n):
    class Holder:
        # the bound's lazy scope reads the parameter itself (a free variable)
        def method[T: (T, int)](self, x: T) -> T:
            return x

    (t,) = Holder.method.__type_params__
    return Holder().method(n), t.__bound__[1].__name__, t.__bound__[0] is t


class _Keywords:
    def __init_subclass__(cls, **kw):
        cls.kw = sorted(kw)


@cases((1,),)
def generic_refers_to_itself[**P](n):
    # its own name, a global, is read only inside a nested type-parameter scope
    class Inner[*Ts](_Keywords, flag=generic_refers_to_itself, spec=P):
        pass

    return Inner.kw, n


@cases((False,), (True,))
def conditional_last_base(flag):
    # 3.13 loads the base and the hidden Generic base with one superinstruction in one
    # arm only: the copies still share their tail
    class Pick[T](T if flag else object):
        pass

    return Pick.__name__


@cases((True,), (False,), (0,))
def generic_class_with_conditional_base(flag):
    # the compiler copies the class creation into each arm of the nested conditional
    class C[T](dict if (flag if flag is not None else not flag) else list):
        pass
    return C.__mro__[1].__name__, [p.__name__ for p in C.__type_params__]


@cases((int,), (str,))
def annotated_generic_closure(kind):
    # the annotation reads a cell of the enclosing function, and so does the body
    def inner[T](a: T = 1) -> kind:
        return kind(a)

    return inner(), inner("7"), inner.__annotations__, inner.__type_params__[0].__name__


@cases((True,), (False,), (None,))
def alias_in_a_class_whose_arms_are_alike(flag):
    # both arms load the same name from the class namespace: the test still runs
    seen = []

    class Probe:
        def __bool__(self):
            seen.append(flag)
            return bool(flag)

    class C:
        probe = Probe()
        type X = int if probe else int

    return C.X.__value__.__name__, seen


@cases(((1, 2),), ((),))
def alias_whose_comprehension_rebinds_its_parameter_after_a_false_test(xs):
    # the loop after 'if ()' (code the compiler drops) makes T the comprehension's own,
    # a cell the lambda reads; 3.12+ reads that cell with the index of the free T
    # (the read of T in the second iterable fails: the comprehension's T is unbound)
    type A[T] = [y for x in (T, *xs) for y in (lambda: T, T) if () for T in ()]
    try:
        value = A.__value__
    except NameError as e:
        value = type(e).__name__
    return value, A.__type_params__[0].__name__


@cases(((1, 2), (3,)), ((), ()))
def generator_cut_short_whose_dropped_part_reads_a_type_parameter(xs, ys):
    # after 'if f""' the compiler drops a dict comprehension (inlined) that binds P and
    # a loop that reads the free P: the generator keeps both
    def make[P]():
        return (x for x in xs if f"" if {0: 0 for P in ys} for z in (P,))

    gen = make()
    return list(gen), sorted(gen.gi_code.co_freevars), gen.gi_code.co_varnames
