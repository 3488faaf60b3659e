"""Decorators: plain, with arguments, stacked, class decorators, functools.wraps."""

import functools

from ._support import cases

LOG: list = []


def log_calls(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        LOG.append(("call", func.__name__, args))
        result = func(*args, **kwargs)
        LOG.append(("return", func.__name__, result))
        return result

    return wrapper


def repeat(times):
    def decorator(func):
        def wrapper(*args):
            return [func(*args) for _ in range(times)]

        return wrapper

    return decorator


def register(registry):
    def decorator(func):
        registry[func.__name__] = func
        return func

    return decorator


@log_calls
def _logged_double(x):
    return x * 2


@cases((3,), ("ab",))
def use_module_level_decorated(x):
    return _logged_double(x), _logged_double.__name__, _logged_double.__wrapped__(x)


@cases((2,), (5,))
def decorate_inner_function(n):
    @log_calls
    def area(w, h=1):
        return w * h

    return area(n, h=3), area.__name__


@cases((2,),)
def decorator_with_arguments(n):
    @repeat(n)
    def ping():
        LOG.append("ping")
        return "pong"

    return ping()


@cases((1,),)
def stacked_decorators(n):
    @log_calls
    @repeat(2)
    def value():
        return n

    return value()


@cases(("a",),)
def registry_decorator(name):
    handlers = {}

    @register(handlers)
    def on_start():
        return "started " + name

    @register(handlers)
    def on_stop():
        return "stopped " + name

    return sorted(handlers), handlers["on_start"]()


@cases((5,),)
def decorator_order(n):
    order = []

    def mark(label):
        order.append(("make", label))

        def deco(func):
            order.append(("apply", label))
            return func

        return deco

    @mark("outer")
    @mark("inner")
    def f():
        return n

    return order, f()


@cases((3,),)
def class_decorator(n):
    def add_repr(cls):
        cls.__repr__ = lambda self: f"<{cls.__name__} {self.value}>"
        return cls

    @add_repr
    class Thing:
        def __init__(self, value):
            self.value = value

    return repr(Thing(n))


@cases((10,), (0,))
def cached_function(n):
    calls = []

    @functools.lru_cache(maxsize=None)
    def fib(k):
        calls.append(k)
        return k if k < 2 else fib(k - 1) + fib(k - 2)

    return fib(n), len(calls)


@cases((2,),)
def decorator_expression_forms(n):
    decorators = [log_calls, repeat(n)]

    @decorators[1]
    def a():
        return "a"

    @(lambda f: f)
    def b():
        return "b"

    return a(), b()


@cases((4,),)
def decorator_replacing_function(n):
    def constant(value):
        return lambda func: lambda *a: value

    @constant(n * 2)
    def ignored(x):
        return x

    return ignored(1)


@cases((1,),)
def decorated_method(n):
    class Service:
        @log_calls
        def handle(self, request):
            return request + n

        @staticmethod
        @log_calls
        def helper(x):
            return -x

    s = Service()
    return s.handle(1), Service.helper(2)


@cases((3, 4),)
def wraps_preserves_metadata(a, b):
    def deco(func):
        @functools.wraps(func)
        def inner(*args):
            return func(*args) + 1

        return inner

    @deco
    def add(x, y):
        """Add two numbers."""
        return x + y

    return add(a, b), add.__name__, add.__doc__
