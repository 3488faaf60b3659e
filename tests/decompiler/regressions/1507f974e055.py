# Written by hand after a random-program failure (a chained comparison choosing a generic class's keywords), Python 3.12.
def f(a, b, c):
    class Sub[T](Box, **({"k": a} if a in (b, c) <= {1, 2, 3} else {})):
        pass
