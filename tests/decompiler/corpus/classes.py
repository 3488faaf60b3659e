"""Classes: methods, class attributes, properties, super(), class/static methods,
nested classes, name mangling, dunder methods."""

from ._support import cases, exercised_by

LOG: list = []


@exercised_by("use_stack", "stack_errors")
class Stack:
    """A list-backed stack."""

    created = 0

    def __init__(self, items=()):
        self._items = list(items)
        Stack.created += 1

    def push(self, item):
        self._items.append(item)
        return self

    def pop(self):
        if not self._items:
            raise IndexError("pop from empty stack")
        return self._items.pop()

    @property
    def top(self):
        return self._items[-1] if self._items else None

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return f"Stack({self._items!r})"


@cases(([1, 2, 3],), ([],))
def use_stack(items):
    s = Stack(items)
    s.push(10).push(20)
    popped = [s.pop(), s.pop()]
    return popped, len(s), s.top, repr(s), Stack.created > 0


@cases((0,), (2,))
def stack_errors(n):
    s = Stack(range(n))
    return [s.pop() for _ in range(n + 1)]


@exercised_by("use_shapes")
class Shape:
    sides = 0

    def __init__(self, name):
        self.name = name

    def area(self):
        raise NotImplementedError

    def describe(self):
        return f"{self.name} with {self.sides} sides and area {self.area():.2f}"

    @classmethod
    def unit(cls):
        return cls(1)

    @staticmethod
    def compare(a, b):
        return (a.area() > b.area()) - (a.area() < b.area())


class Square(Shape):
    sides = 4

    def __init__(self, size):
        super().__init__("square")
        self.size = size

    def area(self):
        return self.size**2


class Circle(Shape):
    def __init__(self, radius):
        super().__init__(name="circle")
        self.radius = radius

    def area(self):
        return 3.14159 * self.radius**2

    def describe(self):
        base = super().describe()
        return base.replace("0 sides", "no sides")


@cases((2,), (0,))
def use_shapes(n):
    shapes = [Square(n), Circle(n), Square.unit(), Circle.unit()]
    out = [s.describe() for s in shapes]
    out.append(Shape.compare(shapes[0], shapes[1]))
    try:
        Shape("abstract").describe()
    except NotImplementedError:
        out.append("abstract")
    return out


@exercised_by("use_account")
class Account:
    __slots__ = ("__balance", "owner")

    def __init__(self, owner, balance=0):
        self.owner = owner
        self.__balance = balance

    @property
    def balance(self):
        return self.__balance

    @balance.setter
    def balance(self, value):
        if value < 0:
            raise ValueError("balance cannot be negative")
        self.__balance = value

    def withdraw(self, amount):
        self.balance = self.__balance - amount
        return self.__balance


@cases((100, 30), (10, 30))
def use_account(start, amount):
    acct = Account("ann", start)
    left = acct.withdraw(amount)
    return left, acct.balance, hasattr(acct, "_Account__balance"), acct.owner


@exercised_by("use_vector")
class Vector:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, other):
        return Vector(self.x + other.x, self.y + other.y)

    def __mul__(self, k):
        return Vector(self.x * k, self.y * k)

    __rmul__ = __mul__

    def __eq__(self, other):
        return isinstance(other, Vector) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self):
        return hash((self.x, self.y))

    def __iter__(self):
        yield self.x
        yield self.y

    def __bool__(self):
        return bool(self.x or self.y)

    def __getitem__(self, index):
        return (self.x, self.y)[index]

    def __repr__(self):
        return f"Vector({self.x}, {self.y})"


@cases((1, 2), (0, 0))
def use_vector(x, y):
    v = Vector(x, y)
    w = v + Vector(1, 1) * 2
    return repr(w), list(3 * v), bool(v), v == Vector(x, y), v[1], len({v, Vector(x, y)})


@cases((3,),)
def class_in_function(n):
    class Node:
        count = 0

        def __init__(self, value, next_node=None):
            self.value = value
            self.next = next_node
            Node.count += 1

        def __iter__(self):
            node = self
            while node is not None:
                yield node.value
                node = node.next

    head = None
    for i in range(n):
        head = Node(i, head)
    return list(head), Node.count


@cases((2,),)
def super_in_inner_class(n):
    class Base:
        def greet(self):
            return "base"

    class Child(Base):
        def greet(self):
            return "child+" + super().greet()

    class GrandChild(Child):
        def greet(self):
            return super(Child, self).greet() + "|" + super().greet()

    return [c().greet() for c in (Base, Child, GrandChild)][:n + 1]


@cases(("x",),)
def name_mangling_in_function_class(v):
    class Secret:
        __hidden = "class secret"

        def __init__(self):
            self.__value = v

        def reveal(self):
            return self.__value, self.__hidden, Secret.__hidden

    s = Secret()
    return s.reveal(), sorted(k for k in vars(s)), hasattr(Secret, "_Secret__hidden")


@cases((1,),)
def nested_classes(n):
    class Outer:
        class Inner:
            value = n

            class Deepest:
                value = n * 2

        def get(self):
            return self.Inner.value + self.Inner.Deepest.value

    return Outer().get(), Outer.Inner.Deepest.__qualname__


@cases((5,),)
def class_attributes_and_instance_shadowing(n):
    class Config:
        debug = False
        level = 1
        names = []

    c = Config()
    c.debug = True
    c.names.append("shared")
    Config.level = n
    return c.debug, Config.debug, c.level, Config.names


@cases((2,),)
def classmethod_factory(n):
    class Temperature:
        def __init__(self, celsius):
            self.celsius = celsius

        @classmethod
        def from_fahrenheit(cls, f):
            return cls((f - 32) * 5 / 9)

        @staticmethod
        def valid(c):
            return c > -273.15

        @property
        def fahrenheit(self):
            return self.celsius * 9 / 5 + 32

    t = Temperature.from_fahrenheit(212)
    return t.celsius, t.fahrenheit, Temperature.valid(-300), Temperature(n).fahrenheit


@cases((3,), (-1,))
def property_with_deleter(n):
    class Item:
        def __init__(self):
            self._qty = 0

        @property
        def qty(self):
            return self._qty

        @qty.setter
        def qty(self, value):
            if value < 0:
                raise ValueError("negative quantity")
            self._qty = value

        @qty.deleter
        def qty(self):
            LOG.append("deleted")
            self._qty = None

    item = Item()
    item.qty = n
    before = item.qty
    del item.qty
    return before, item.qty


@cases((4,),)
def dunder_container(n):
    class Bag:
        def __init__(self):
            self.data = {}

        def __setitem__(self, key, value):
            self.data[key] = value

        def __getitem__(self, key):
            return self.data[key]

        def __delitem__(self, key):
            del self.data[key]

        def __contains__(self, key):
            return key in self.data

        def __len__(self):
            return len(self.data)

    b = Bag()
    for i in range(n):
        b[i] = i * i
    del b[0]
    return len(b), 1 in b, 0 in b, b[n - 1]


@cases((1,),)
def class_with_metaclass_and_kwargs(n):
    class Meta(type):
        def __new__(mcs, name, bases, ns, **kwargs):
            ns["tag"] = kwargs.get("tag", "none")
            return super().__new__(mcs, name, bases, ns)

    class Tagged(metaclass=Meta, tag="special"):
        pass

    class Plain(metaclass=Meta):
        pass

    return Tagged.tag, Plain.tag, type(Tagged).__name__


@cases((2,),)
def init_subclass_hook(n):
    registry = []

    class Plugin:
        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            registry.append(cls.__name__)

    class A(Plugin):
        pass

    class B(Plugin):
        pass

    return registry, n


@cases((3,),)
def dataclass_like(n):
    from dataclasses import dataclass, field

    @dataclass
    class Point:
        x: int
        y: int = 0
        tags: list = field(default_factory=list)

        def norm1(self):
            return abs(self.x) + abs(self.y)

    p = Point(n, -n)
    return p.norm1(), p == Point(n, -n), repr(p)


@cases((1,), (0,))
def class_body_statements(n):
    class Weird:
        x = n
        if x > 0:
            kind = "positive"
        else:
            kind = "other"
        for i in range(3):
            x += i
        squares = [j * j for j in range(3)]
        del i

    return Weird.kind, Weird.x, Weird.squares, hasattr(Weird, "i")


@cases((2,),)
def class_docstring_and_qualname(n):
    class Documented:
        """The docstring."""

        def method(self):
            """Method doc."""
            return n

    return Documented.__doc__, Documented.method.__doc__, Documented.method.__qualname__


@cases((1,),)
def getattr_fallback(n):
    class Proxy:
        def __init__(self, target):
            self._target = target

        def __getattr__(self, name):
            LOG.append(name)
            return getattr(self._target, name)

    p = Proxy([n, 2])
    return p.count(n), p.index(2), p._target


@cases((3,), (0,))
def comparison_dunders(n):
    import functools

    @functools.total_ordering
    class Version:
        def __init__(self, major):
            self.major = major

        def __eq__(self, other):
            return self.major == other.major

        def __lt__(self, other):
            return self.major < other.major

    a, b = Version(n), Version(1)
    return a < b, a <= b, a > b, a >= b, a == b, sorted([a, b])[0].major


only_a_dead_handler_binds_it = "the module's"


@cases(("the function's",),)
def class_reading_a_name_only_a_dead_handler_binds(only_a_dead_handler_binds_it):
    # the class body binds the name (in a handler that cannot run), so it reads it as a
    # class or global name, never as the function's variable
    class C:
        try:
            pass
        except ValueError as only_a_dead_handler_binds_it:
            pass
        seen = only_a_dead_handler_binds_it

    return C.seen, only_a_dead_handler_binds_it


declared_global_in_a_class = "the module's"


@cases(("the function's",),)
def class_body_declaring_a_global(declared_global_in_a_class):
    # ``global`` in a class body: the body reads and writes the module's name, not the
    # class namespace and not the function's variable
    class C:
        global declared_global_in_a_class
        before = declared_global_in_a_class
        declared_global_in_a_class = "set by the class"
        after = declared_global_in_a_class

    return C.before, C.after, hasattr(C, "declared_global_in_a_class"), \
        declared_global_in_a_class, globals()["declared_global_in_a_class"]


DECO = None


@cases(({},), (None,), ({"a": 1},))
def decorator_read_before_a_walrus_in_its_bases(extra):
    global DECO
    DECO = lambda c: ("decorated by the first", c.__name__)  # noqa: E731

    @DECO
    class C((DECO := object), **(extra or {}) and {}):
        pass
    return C, DECO is object


@cases(("a",), ("",))
def class_that_sets_its_module(msg):
    # (sre_constants.error: a '__module__' the body sets after its docstring is kept;
    # only the compiler's own '__module__ = __name__' is the header)
    class Error(Exception):
        """An error reported as re's."""

        __module__ = "re"
        __qualname__ = "error"

        def __init__(self, text):
            super().__init__(text or "empty")

    e = Error(msg)
    return e.__module__, type(e).__qualname__, str(e), Error.__doc__


@cases((1,), (None,))
def class_body_reads_a_name_it_binds_after_a_raise(shade):
    # the body binds 'shade' only after the raise (code the compiler drops), so its read
    # is the class's own lookup, which ends in the globals: a NameError, not the
    # parameter
    try:
        class C:
            shade  # noqa: B018
            raise ValueError(shade)
            try:
                pass
            except TypeError as shade:  # noqa: F841
                pass
    except NameError as e:
        return "name", str(e)
    except ValueError as e:
        return "value", e.args
    return C


@cases((True, 1), (False, 1), (False, 0), ([], None))
def class_bases_tested_by_conditionals_with_constant_arms(flag, other):
    # '(0 if probe else 0)' is false either way: only the truth test of 'probe' runs,
    # between the class's name and its base; '(0 if probe else other)' after '*bases'
    seen = []

    class Probe:
        def __bool__(self):
            seen.append("bool")
            return bool(flag)

    probe = Probe()
    bases = (KeyError,)

    class C(0 if (0 if probe else 0) else Exception):
        pass

    class D(*bases, ValueError if (0 if probe else other) else LookupError):
        pass

    return [k.__name__ for k in C.__mro__], [k.__name__ for k in D.__mro__], seen


@cases((1,), (-2,))
def method_with_a_class_cell_it_never_reads(x):
    # 'super' only in code the compiler drops still gives the method its __class__ cell
    # (Dynamo's code for a method keeps the cell where its super() call went into the
    # graph): a dead read keeps it
    class Base:
        def m(self, x):
            return x * 2

    class C(Base):
        def m(self, x):
            if False:
                super  # noqa: B018
            return x + 1

    return C().m(x), C.m.__code__.co_freevars
