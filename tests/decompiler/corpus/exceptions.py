"""try / except / else / finally, raise, re-raise, raise from, control flow in handlers."""

from ._support import cases

LOG: list = []


class AppError(Exception):
    """Base error of the corpus application."""


class NotFound(AppError):
    def __init__(self, key):
        super().__init__(f"missing {key!r}")
        self.key = key


@cases(("12",), ("x",), (None,))
def parse_int(text):
    try:
        return int(text)
    except ValueError:
        return None
    except TypeError as e:
        return str(e)


@cases((10, 2), (1, 0), ("a", 1), (5, "b"))
def safe_divide(a, b):
    try:
        result = a / b
    except ZeroDivisionError:
        LOG.append("zero")
        result = float("inf")
    except (TypeError, ValueError) as exc:
        LOG.append(type(exc).__name__)
        raise
    else:
        LOG.append("ok")
    finally:
        LOG.append("finally")
    return result


@cases(({"a": 1}, "a"), ({}, "b"), ([1, 2], 5), ([1], "x"))
def lookup(container, key):
    try:
        value = container[key]
    except KeyError:
        raise NotFound(key) from None
    except IndexError as e:
        raise NotFound(key) from e
    except TypeError:
        raise
    return value


@cases((1,), (0,), (-1,))
def bare_except(x):
    try:
        return 1 / x if x >= 0 else [][x]
    except:  # noqa: E722
        LOG.append("caught")
        return "failed"


@cases((0,), (1,), (2,))
def finally_runs_on_return(n):
    try:
        if n == 0:
            return "zero"
        LOG.append("body")
    finally:
        LOG.append("cleanup")
    return "after"


@cases((0,), (1,))
def finally_overrides_return(n):
    try:
        return "try"
    finally:
        if n:
            return "finally"  # noqa: B012


@cases((0,), (1,))
def finally_swallows_exception(n):
    try:
        raise ValueError("lost")
    finally:
        if n:
            return "swallowed"  # noqa: B012


@cases(([1, 2, 3, 4],), ([],))
def break_in_finally_loop(items):
    seen = []
    for item in items:
        try:
            seen.append(item)
            if item == 2:
                break
        finally:
            LOG.append(("f", item))
    return seen


@cases(([1, 0, 2],), ([3],))
def continue_in_except(items):
    out = []
    for x in items:
        try:
            out.append(6 // x)
        except ZeroDivisionError:
            LOG.append("skip zero")
            continue
        out.append("after")
    return out


@cases(([1, "x", 3],), ([],))
def break_in_except(items):
    total = 0
    for x in items:
        try:
            total += x
        except TypeError:
            break
    return total


@cases((0,), (1,), (2,), (3,))
def return_in_except(kind):
    try:
        if kind == 1:
            raise KeyError("k")
        if kind == 2:
            raise IndexError(2)
        if kind == 3:
            raise RuntimeError("boom")
    except KeyError:
        return "key"
    except IndexError as err:
        return f"index {err}"
    return "none"


@cases((0,), (1,), (2,), (3,))
def nested_try(kind):
    try:
        try:
            if kind == 1:
                raise ValueError("inner")
            if kind == 2:
                raise KeyError("outer")
            if kind == 3:
                raise TypeError("escape")
        except ValueError as e:
            LOG.append(("inner", str(e)))
            raise KeyError("converted") from e
        finally:
            LOG.append("inner finally")
    except KeyError as e:
        LOG.append(("outer", e.args))
        return "handled"
    finally:
        LOG.append("outer finally")
    return "clean"


@cases((1,), (0,))
def reraise_with_context(x):
    try:
        try:
            1 / x
        except ZeroDivisionError:
            raise ValueError("bad x")
    except ValueError as e:
        return type(e.__context__).__name__, str(e)
    return "fine"


@cases((1,), (0,))
def raise_from_cause(x):
    try:
        return 10 // x
    except ZeroDivisionError as e:
        raise AppError("division failed") from e


@cases(("a",), ("b",), ("c",))
def custom_exceptions(key):
    try:
        if key == "a":
            raise NotFound(key)
        if key == "b":
            raise AppError("generic")
    except NotFound as e:
        return "not found", e.key
    except AppError as e:
        return "app", e.args
    return "ok", None


@cases((0,), (1,))
def exception_variable_cleared(x):
    e = "before"
    try:
        if x:
            raise ValueError("v")
    except ValueError as e:  # noqa: F811
        LOG.append(str(e))
    try:
        return e
    except NameError:
        return "unbound"


@cases((0,), (1,), (2,))
def try_else_finally_order(n):
    try:
        LOG.append("try")
        if n == 1:
            raise ValueError
    except ValueError:
        LOG.append("except")
    else:
        LOG.append("else")
        if n == 2:
            return "from else"
    finally:
        LOG.append("finally")
    LOG.append("end")
    return "end"


@cases((3,), (0,), (7,))
def while_with_try_retry(failures):
    attempts = 0
    while True:
        attempts += 1
        try:
            if attempts <= failures:
                raise ConnectionError(f"attempt {attempts}")
            break
        except ConnectionError as e:
            LOG.append(str(e))
            if attempts > 5:
                raise
    return attempts


@cases((0,), (1,), (2,))
def handler_raises_new(kind):
    try:
        if kind:
            raise ValueError(kind)
    except ValueError as e:
        if e.args[0] == 2:
            raise RuntimeError("second") from None
        return "first"
    return "none"


@cases(([1, 2],), ("ab",), (5,))
def except_tuple_from_variable(obj):
    errors = (TypeError, IndexError)
    try:
        return obj[5]
    except errors as e:
        return type(e).__name__


@cases((0,), (1,))
def finally_with_exception_in_flight(n):
    try:
        try:
            if n:
                raise KeyError("k")
        finally:
            LOG.append("cleanup")
    except KeyError:
        LOG.append("outer caught")
    return len(LOG)


@cases((0,), (1,), (2,), (3,))
def except_order_matters(n):
    try:
        if n == 3:
            raise AppError("plain")
        if n == 1:
            raise NotFound("x")
        if n == 2:
            raise LookupError("y")
    except NotFound:
        return "notfound"
    except AppError:
        return "app"
    except LookupError:
        return "lookup"
    return "nothing"


@cases((0,), (1,))
def raise_instance_and_class(n):
    try:
        if n:
            raise ValueError
        raise ValueError("with message")
    except ValueError as e:
        return e.args


@cases((0,), (1,), (2,))
def assert_and_catch(n):
    try:
        assert n != 1, "n must not be 1"
        assert n != 2
    except AssertionError as e:
        return e.args
    return "passed"


@cases((0,), (1,))
def try_in_finally(n):
    try:
        LOG.append("body")
    finally:
        try:
            if n:
                raise ValueError("in finally")
        except ValueError:
            LOG.append("handled in finally")
    return len(LOG)


@cases((0,), (1,), (2,))
def nested_finally_return(n):
    try:
        try:
            if n == 0:
                return "inner"
            if n == 1:
                raise KeyError
        finally:
            LOG.append("a")
    except KeyError:
        return "caught"
    finally:
        LOG.append("b")
    return "end"


@cases(([("ok", 1), ("bad", 0), ("ok", 2)],), ([],))
def error_collection(items):
    errors = []
    results = []
    for name, value in items:
        try:
            if name == "bad":
                raise ValueError(name)
            results.append(value)
        except ValueError as exc:
            errors.append(exc)
    if errors:
        raise errors[0]
    return results


@cases((0,), (5,))
def exception_attributes(n):
    try:
        {}["missing" * n]
    except KeyError as e:
        err = e
    return err.args, str(err), repr(err)


@cases((1,), (0,), (-1,), (2,))
def raise_in_else(x):
    try:
        y = 1 // x if x >= 0 else 0
    except ZeroDivisionError:
        return "div"
    else:
        if y == 0:
            raise ValueError("zero result")
        return y


@cases((0,), (1,))
def generic_exception_message(n):
    try:
        if n:
            raise Exception("generic", n)
        return "fine"
    except Exception as e:
        return e.args


@cases((2,), (0,), (5,))
def loop_try_finally_return(n):
    for i in range(3):
        try:
            if i == n:
                return i
        finally:
            LOG.append(i)
    return None


@cases(("x",), (3,))
def catch_base_exception(v):
    try:
        return len(v)
    except BaseException as e:
        return type(e).__name__


@cases((1,), (2,), (3,))
def reraise_after_logging(n):
    try:
        if n == 1:
            raise ValueError("one")
        if n == 2:
            raise KeyError("two")
    except (ValueError, KeyError) as e:
        LOG.append(repr(e))
        if isinstance(e, KeyError):
            raise
    return n


@cases((0,), (1,))
def exit_via_stop_iteration(n):
    it = iter([1] if n else [])
    try:
        return next(it)
    except StopIteration:
        return "empty"


@cases((5,), (-5,))
def raise_in_function_call(n):
    def validate(v):
        if v < 0:
            raise ValueError(f"negative: {v}")
        return v

    try:
        return validate(n) * 2
    except ValueError as e:
        LOG.append(e.args[0])
        raise


def _maybe_fail(x):
    LOG.append(("call", x))
    if x == 3:
        raise KeyError(x)
    return x * 2


@cases((1, True), (-1, True), (1, False), (3, True), (3, False))
def finally_with_conditional_cleanup(a, b):
    # the compiler copies the re-raise (and the return) into both arms of the ``if``
    try:
        return _maybe_fail(a)
    finally:
        if a > 0 and b:
            LOG.append(("cleanup", a))


@cases((0,), (2,), (3,))
def finally_conditional_after_loop(n):
    total = 0
    try:
        while True:
            if total >= n:
                break
            total += _maybe_fail(1)
        return total
    finally:
        if total > 1:
            LOG.append(("many", total))
        else:
            LOG.append(("few", total))


class _Flaky:
    def __init__(self, failures):
        self.failures = failures

    def wait(self):
        LOG.append(("wait", self.failures))
        if self.failures:
            self.failures -= 1
            raise KeyboardInterrupt
        return "done"


@cases((0,), (2,))
def retry_until_no_interrupt(failures):
    # the try starts at the loop's head; its break leaves both
    proc = _Flaky(failures)
    while True:
        try:
            proc.wait()
            break
        except KeyboardInterrupt:
            pass
    return proc.failures


@cases((0,), (1,), (3,))
def retry_with_else_and_counter(failures):
    proc = _Flaky(failures)
    tries = 0
    while True:
        tries += 1
        try:
            result = proc.wait()
        except KeyboardInterrupt:
            continue
        else:
            return result, tries


unbound_in_dead_handler = "a global the function must not read"


@cases((0,), (1,))
def name_bound_only_by_a_dead_handler(flag):
    # the handlers of an empty try never run, but their names stay local
    try:
        pass
    except ValueError as unbound_in_dead_handler:
        pass
    if flag:
        return unbound_in_dead_handler
    return flag


@cases((0,), (1,))
def closure_over_a_name_only_a_dead_handler_binds(flag):
    try:
        pass
    except ValueError as unbound_in_dead_handler:
        pass
    return (lambda: unbound_in_dead_handler)() if flag else flag


@cases((0,), (1,))
def name_bound_only_after_a_return(flag):
    while flag:
        flag -= 1
    else:
        return unbound_in_dead_handler
    unbound_in_dead_handler = 2


@cases((ValueError,), (KeyError,), (None,))
def raise_after_swallowed(kind):
    """3.12 copies the ``raise`` after the ``try`` into the handler's exit: it must stay
    outside the clause (inside, the new exception gets the handled one as context)."""
    try:
        if kind is not None:
            raise kind("inner")
        LOG.append("no error")
    except:  # noqa: E722
        pass
    raise SystemExit(kind)


@cases((ValueError,), (None,))
def bare_raise_after_swallowed(kind):
    try:
        if kind is not None:
            raise kind("inner")
    except ValueError:
        LOG.append("swallowed")
    raise


# (keep this last: the module's end is the code after the loop) a module-level retry
# loop whose exit leads straight to the end of the module
_RETRIES = 0
if __name__ != "__never__":
    while True:
        try:
            _RETRIES += 1
            if _RETRIES < 2:
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            continue
        else:
            break
    _AFTER_RETRIES = _RETRIES


@cases((None,), (1,))
def if_else_in_try_whose_handler_always_raises(tb):
    # 3.13 leaves the first arm's jump to the join out of the protected range
    class NS:
        last = "last"

    if tb is None:
        try:
            if hasattr(NS, "last_exc"):
                tb = NS.last_exc
            else:
                tb = NS.last
        except AttributeError:
            raise RuntimeError("none") from None
        while len(tb) > 10:
            tb = tb[1:]
    return tb


@cases((["a"],), ([],))
def return_name_the_finally_rebinds(results):
    tmp = results
    try:
        return tmp
    finally:
        # the returned value was read before the clean-up rebinds the name
        tmp = None


class _Closer:
    def __init__(self, delete, on_close, fail):
        self.called = False
        self.delete = delete
        self.on_close = on_close
        self.fail = fail
        self.log = []

    def cleanup(self):
        self.log.append("cleanup")


@cases((True, True, False), (True, False, False), (False, True, True), (True, True, True))
def finally_with_and_test_at_function_end(delete, on_close, fail):
    # the normal path's copy of the finally ends the function in each arm
    self = _Closer(delete, on_close, fail)
    if not self.called:
        self.called = True
        try:
            if self.fail:
                raise OSError("close")
            self.log.append("closed")
        finally:
            if self.delete and self.on_close:
                self.cleanup()


@cases((0, None), (1, "h"), (2, "h"), (3, None))
def return_call_from_try_except_finally(mode, handler):
    # the finally's copy on the return path has blocks of its own (an ``and`` test)
    log = []

    def run():
        if mode == 1:
            raise ValueError("run")
        if mode == 2:
            raise LookupError("run")
        return mode * 10

    try:
        return run()
    except ValueError:
        if mode > 0:
            raise KeyError("count") from None
        raise
    finally:
        if handler is not None and len(log) == 0:
            log.append(handler)


@cases((0, 0), (3, 1), (0, 5))
def return_after_loop_in_try_finally(count, total):
    seen = []
    try:
        while True:
            if count <= total:
                break
            total += 1
        return total
    finally:
        if total > 0 and count >= 0:
            seen.append(total)


@cases(({"nil": 1}, "ex:nil"), ({"a": 2}, "a"), ({}, "nil"), ({}, "ex:nil"))
def try_in_handler_whose_clause_returns(d, tag):
    # the inner try's normal way on leaves the outer clause: only its clause returns
    # (xmlrpc.client.Unmarshaller.end)
    try:
        f = d[tag]
    except KeyError:
        if ":" not in tag:
            return
        try:
            f = d[tag.split(":")[-1]]
        except KeyError:
            return
    return f


@cases((["a", "b", "C"], {"a": 1, "B": 2}), ([], {}))
def try_in_handler_whose_clause_continues(items, d):
    out = []
    for tag in items:
        try:
            v = d[tag]
        except KeyError:
            try:
                v = d[tag.upper()]
            except KeyError:
                continue
        out.append(v)
    return out


def _reraise_active():
    raise  # the exception the caller is handling


@cases(([0, 1],), ([1],), ([2, 0],))
def handler_sees_the_exception_being_handled(xs):
    # inside a clause the exception is "being handled": sys.exc_info() and a bare raise
    # in a called function see it (also where the clause is lowered)
    import sys

    seen = []
    for x in xs:
        try:
            seen.append(10 // x)
        except ZeroDivisionError:
            seen.append(sys.exc_info()[0].__name__)
            try:
                _reraise_active()
            except ZeroDivisionError as e:
                seen.append(type(e).__name__)
        finally:
            seen.append(sys.exc_info()[0])
    return seen


@cases((None, True, False), (1, True, False), (None, False, True), (1, True, True), (2, False, False))
def returns_through_a_finally_with_an_if(parser, close_source, fail):
    # each return runs its own copy of the finally, an ``if`` with blocks of its own
    log = []
    try:
        if parser is None:
            return 1, log
        if fail:
            raise KeyError(parser)
        log.append(parser)
        return 2, log
    finally:
        if close_source:
            log.append("closed")


class _Doc:
    """A documented class."""


@cases((None,), (3,), ("s",), (_Doc,), (_Doc(),), (type,))
def constant_returns_in_a_try_body(obj):
    # (pydoc._getowndoc: the compiler copies each ``return None`` out of the try body;
    # which of them is the code after the statement only the layout could tell)
    try:
        doc = object.__getattribute__(obj, "__doc__")
        if doc is None:
            return None
        if obj is not type:
            typedoc = type(obj).__doc__
            if isinstance(typedoc, str) and typedoc == doc:
                return None
        return doc
    except AttributeError:
        return None


@cases((0, True), (1, True), (2, True), (2, False), (3, True))
def constant_returns_in_a_try_in_an_except_clause(fails, probe):
    # (dbm.whichdb: each return leaves through the enclosing clause's clean-up)
    calls = []

    def attempt():
        calls.append(len(calls))
        if len(calls) <= fails:
            raise OSError(len(calls))

    try:
        attempt()
    except OSError:
        try:
            attempt()
            if probe:
                attempt()
                return "probed", calls
        except OSError:
            pass
    return "plain", calls


@cases((0, True), (1, True), (2, True), (2, False), (3, True))
def constant_returns_in_a_try_in_an_except_clause_of_constants(fails, probe):
    # (dbm.whichdb: which constant return is the code after the statement only a
    # second reading tells)
    def attempt():
        LOG.append(len(LOG))
        if len(LOG) <= fails:
            raise OSError(len(LOG))

    try:
        attempt()
    except OSError:
        try:
            attempt()
            if probe:
                attempt()
                return "probed"
        except OSError:
            pass
    return "plain"


class _Closable:
    def __init__(self, fail_sync, fail_make):
        self.fail_sync, self.fail_make, self.dict = fail_sync, fail_make, "open"

    def sync(self):
        LOG.append("sync")
        if self.fail_sync:
            raise KeyError("sync")

    def make(self):
        if self.fail_make:
            raise AttributeError("make")
        return "closed"


@cases(((False, False),), ((True, False),), ((False, True),), ((True, True),))
def bare_except_in_a_finally(flags):
    # (shelve.Shelf.close: the bare except is not a finally of its own)
    obj = _Closable(*flags)
    try:
        obj.sync()
    finally:
        try:
            obj.dict = obj.make()
        except:  # noqa: E722
            obj.dict = None
    return obj.dict


@cases(((False, False),), ((True, False),), ((False, True),), ((True, True),))
def typed_except_in_a_finally(flags):
    # (each path of the normal exit's copy ends in the function's return)
    obj = _Closable(*flags)
    try:
        obj.sync()
    finally:
        try:
            obj.dict = obj.make()
        except AttributeError:
            pass
        LOG.append(obj.dict)


class _Stamp:
    def __init__(self, offset):
        if offset is not None:
            self.offset = offset


@cases((1, False, None), (0, True, 5), (0, True, None), (0, False, None))
def if_in_a_clause_whose_arms_meet_after_it(first, second, offset):
    # (imaplib.Time2Internaldate: 3.13 shares 'x = g; return x' between the try's
    # normal end and the clause's arms, which meet only after leaving the clause)
    stamp = _Stamp(offset)
    if first:
        x = 1
    elif second:
        try:
            g = stamp.offset
        except AttributeError:
            if first is None:
                g = 2
            else:
                g = 3
        x = g
    else:
        raise ValueError("neither")
    return x


@cases((0,), (1,), (2,), (3,))
def constant_returns_in_the_clauses_of_a_try_in_a_clause(mode):
    # (codeop._maybe_compile: one inner clause returns, the other goes on after the
    # outer try; each return leaves through the outer clause's clean-up)
    def attempt(n):
        LOG.append(n)
        if n == 1 and mode >= 1:
            raise SyntaxError(mode)
        if n == 2 and mode == 2:
            raise ValueError(mode)
        if n == 2 and mode == 3:
            raise SyntaxError(mode)
        return n

    try:
        attempt(1)
    except SyntaxError:
        try:
            attempt(2)
            return None
        except ValueError as e:
            LOG.append(str(e))
            return None
        except SyntaxError as e:
            LOG.append(str(e))
    return attempt(3)


@cases(([1, "a", 2],), ([],), (["b"],))
def continue_at_the_end_of_the_last_clause(keys):
    it = iter(keys)
    table = {1: "one", 2: "two"}
    seen = []
    while True:
        try:
            seen.append(table[next(it)])
        except StopIteration:
            return seen
        except KeyError:
            continue


@cases(([3, "x", 1],), ([],))
def clause_that_falls_off_the_end_of_a_while_loop(items):
    items = list(items)
    missing = []
    while items:
        item = items.pop()
        try:
            item + 1
        except TypeError:
            missing.append(item)
    return missing


@cases((0, False), (3, False), (2, True), (0, True))
def while_loop_in_a_finally(count, fail):
    # (asyncio's Semaphore.acquire: the handler's copy of the finally leaves the loop
    # through its first test and its last, each into a re-raise of its own)
    log = []
    try:
        if fail:
            raise KeyError(count)
        log.append("body")
    finally:
        while count > 0:
            log.append(count)
            count -= 1
    return log


@cases((False, False, 0), (True, False, 0), (False, True, 1), (True, True, 1),
       (True, True, 0), (False, True, 0))
def return_on_one_path_of_a_finally(fail, interrupted, wait):
    # (subprocess's Popen.__exit__: the finally returns on one path, swallowing the
    # exception there, and falls through on the other; the normal copy shares the return
    # after the statement)
    log = []
    try:
        if fail:
            raise KeyError(wait)
        log.append("body")
    finally:
        if interrupted:
            if wait > 0:
                try:
                    log.append(1 / (wait - 1))
                except ZeroDivisionError:
                    pass
            log.append("interrupted")
            return log
        log.append("wait")


@cases(([1, None, 2],), ([1, "x", None],), ([1, 2],), ([],), (["x", 3],))
def break_in_a_finally_in_a_loop(items):
    # (the finally leaves the loop on one path; an exception in the body is swallowed
    # there and re-raised on the other)
    log = []
    for item in items:
        try:
            log.append(item + 1)
        finally:
            if item is None:
                break
            log.append("done")
    log.append("after")
    return log


@cases(([1, None, 2],), ([1, "x", None],), ([None, "x"],))
def continue_in_a_finally_in_a_loop(items):
    log = []
    for item in items:
        try:
            log.append(item + 1)
        finally:
            if item is None:
                continue
            log.append("done")
    return log


@cases(([(1, "a"), (0, "b"), (1, "c")], False), ([(1, "a")], True), ([], True),
       ([(0, "x")], False))
def while_loop_with_a_test_in_a_finally(stack, fail):
    # (os.fwalk: the finally empties a stack, closing some of what it pops)
    closed = []
    try:
        if fail:
            raise OSError(len(stack))
        closed.append("body")
    finally:
        while stack:
            action, value = stack.pop()
            if action == 1:
                closed.append(value)
    return closed


class _Fallback:
    """An attribute that may be missing, and a table to fall back on."""

    def __init__(self, file=None):
        if file is not None:
            self.file = file
        self.defaults = {"mode": "w+b"}


@cases((_Fallback(),), (_Fallback(type("F", (), {"mode": "r"})()),), (None,))
def return_of_a_value_in_an_except_clause(obj):
    try:
        return obj.file.mode
    except AttributeError:
        return obj.defaults["mode"]


@cases((_Fallback(),), (_Fallback(type("F", (), {"mode": "r"})()),), (None,))
def return_in_the_clause_and_after_the_try(obj):
    try:
        mode = obj.file.mode
    except AttributeError:
        return obj.defaults["mode"]
    LOG.append(mode)
    return mode


@cases(([1, 2, 3], 0), ([1, 2, 3], 5), (None, 0))
def while_true_whose_try_breaks_in_its_handler(items, i):
    total = 0
    while True:
        try:
            total += items[i]
            i += 1
        except IndexError:
            break
    return total, i


@cases(([1, 2, 3], [2, 2, 2], 0), ([1], [1, 1], 0), ([1, 2], [1, 2], 5))
def finally_with_a_loop_in_a_try_except(expected, actual, j):
    i = 0
    try:
        try:
            i += expected[j]
        finally:
            j += 1
            while actual[j] == 2:
                j += 1
    except IndexError:
        LOG.append((i, j))
    return i, j


@cases(([1, 1, 2], [2, 2, 2]), ([1, 2], [1, 3, 3]), ([], [1]))
def finally_with_a_loop_in_a_while_true_try(expected, actual):
    i = j = 0
    while True:
        try:
            e = expected[i]
            i += 1
            try:
                while expected[i] == e:
                    i += 1
            finally:
                j += 1
                while actual[j] == 2:
                    j += 1
        except IndexError:
            break
    return i, j


class _Queue:
    """A queue of records that ends with a sentinel or runs dry."""

    def __init__(self, records, sentinel=None):
        self.records = list(records)
        self._sentinel = sentinel
        self.handled = []

    def dequeue(self, block):
        if not self.records:
            raise IndexError("empty")
        return self.records.pop(0)

    def handle(self, record):
        self.handled.append(record)


@cases((_Queue([1, 2, None, 3]), True), (_Queue([1, 2]), False), (_Queue([None]), False))
def break_inside_a_try_and_in_its_handler(q, has_task_done):
    while True:
        try:
            record = q.dequeue(True)
            if record is q._sentinel:
                if has_task_done:
                    LOG.append("done")
                break
            q.handle(record)
        except IndexError:
            break


class _Sock:
    """A socket whose send may fail with an errno."""

    def __init__(self, errno=None):
        self.errno = errno

    def send(self, data):
        if self.errno is not None:
            raise OSError(self.errno, "failed")
        return len(data)


@cases((_Sock(), True), (_Sock(11), True), (_Sock(11), False))
def clause_that_ends_the_function_with_an_if(sock, debug):
    if sock is None:
        return
    try:
        sock.send(b"\0")
    except OSError:
        if debug:
            LOG.append("failed")


@cases((_Sock(),), (_Sock(11),), (_Sock(9),))
def written_return_none_in_a_clause_before_a_raise(sock):
    try:
        return sock.send(b"ab")
    except OSError as e:
        if e.errno in (11, 35):
            return None
        raise


@cases((True, 2), (True, 0), (False, 2), (True, "x"))
def if_whose_try_returns_or_goes_on_after_the_if(fast, n):
    # the clause goes on to the code after the ``if``, as the false test does
    if fast:
        try:
            return 10 // n
        except ZeroDivisionError:
            pass
    if isinstance(n, int):
        result = n * 3
    else:
        result = None
    return result


@cases(("mod_a", "mod_a"), ("mod_a", "other"))
def pass_in_an_if_whose_else_raises_again(name, missing):
    try:
        raise ImportError("no module", name=missing)
    except ImportError as exc:
        if exc.name == name:
            pass
        else:
            raise
    return name


class _Guard:
    """A context manager that logs, and swallows ``KeyError`` when asked to."""

    def __init__(self, name, swallow=False):
        self.name, self.swallow = name, swallow

    def __enter__(self):
        LOG.append(("enter", self.name))
        return [self.name]

    def __exit__(self, kind, exc, tb):
        LOG.append(("exit", self.name, kind))
        return self.swallow and kind is KeyError


@cases(([1, 2],), ([2],), ([],))
def return_through_a_finally_that_opens_with_a_try(items):
    # (the value waits on the stack under the finally's except clause, which returns it)
    try:
        return len(items)
    finally:
        try:
            items.remove(1)
        except ValueError:
            LOG.append("not there")


@cases(([1, 2], False), ([2], True), ([], "fail"))
def with_returning_through_a_finally_with_a_try(items, fail):
    # (runpy.run_path: the with's exit copy, then the finally's copy with its own try)
    try:
        with _Guard("a", swallow=True) as got:
            if fail == "fail":
                raise KeyError(fail)
            return got + items
    finally:
        try:
            items.remove(1)
        except ValueError:
            pass


@cases(([1],), ([],))
def two_item_with_returning_through_a_finally(items):
    try:
        with _Guard("a") as first, _Guard("b"):
            return first + items
    finally:
        LOG.append(len(items))


@cases((None, [1]), (0, [1]), (0, []), (2, [2]))
def return_through_a_finally_whose_if_holds_a_try(timeout, waiters):
    # (threading.Condition.wait)
    got = False
    try:
        if timeout is None:
            got = True
        else:
            got = timeout > 1
        return got
    finally:
        LOG.append("restore")
        if not got:
            try:
                waiters.remove(1)
            except ValueError:
                pass


@cases((True, True, False), (False, True, True), (True, False, True), (False, False, False))
def finally_in_a_finally_ending_in_an_if_with_a_try(output, backup, fail):
    # (fileinput.FileInput.nextfile: the handler's copy writes the end of the inner
    # finally in both arms of its last if)
    state = {"backup": backup}
    try:
        if output:
            LOG.append("close")
            if fail:
                raise OSError("close")
    finally:
        try:
            del state["missing"]
        except KeyError:
            pass
        try:
            if output and not fail:
                LOG.append("file")
        finally:
            saved = state.pop("backup")
            if saved and not output:
                try:
                    LOG.append(1 // int(fail))
                except ZeroDivisionError:
                    pass
            state["done"] = True
    return state


@cases(({"a": 1}, "a", 0), ({}, "a", 0), ({}, "a", 5), ({}, "b", 9))
def except_clause_with_a_try_finally_then_return(cache, level, disable):
    # (logging.Logger.isEnabledFor: 3.10 copies the finally and the return into each arm)
    try:
        return cache[level]
    except KeyError:
        LOG.append("lock")
        try:
            if disable >= 5:
                enabled = cache[level] = False
            else:
                enabled = cache[level] = len(level) > disable
        finally:
            LOG.append("unlock")
        return enabled


@cases((1, True, False), (2, True, False), (3, False, False), (2, True, True))
def with_if_return_then_try_finally_in_a_finally(mode, closefp, fail):
    # (bz2.BZ2File.close: the handler's copies of the inner finally end alike)
    state = {"mode": mode}
    with _Guard("lock"):
        if state["mode"] == 1:
            return state
        try:
            if state["mode"] == 2:
                LOG.append("buffer")
                if fail:
                    raise ValueError(mode)
        finally:
            try:
                if closefp:
                    LOG.append("fp")
            finally:
                state["mode"] = 0
    return state


@cases(([],), ([1, 2],))
def with_whose_if_ends_then_return_of_a_call(items):
    # (ftplib.FTP.retrbinary: 3.10 copies the exit and the return into each arm)
    with _Guard("conn") as conn:
        if items:
            conn.extend(items)
    return len(conn)


def _parse(value, fail):
    if value in fail:
        raise LookupError(value)
    return value.upper(), value[1:]


@cases(("ab", ()), ("ab", ("ab",)), ("ab", ("ab", "b")), ("", ("",)))
def code_after_a_try_whose_clause_raises_in_a_clause(value, fail):
    # (email._header_value_parser.get_angle_addr: the code after the inner try ends the
    # outer clause; it is not an else clause)
    found = []
    try:
        token, value = _parse(value, fail)
    except LookupError:
        try:
            token, value = _parse(value[1:], fail)
        except LookupError:
            raise ValueError("neither") from None
        found.append(token)
    found.append(token)
    return found, value


@cases((["a", "bad", "b"],), ([],), (["bad"],))
def with_after_a_try_whose_clause_continues(names):
    # (mailcap.getcaps: 3.10 jumps over the handler to the with as to an else clause)
    caps = {}
    for name in names:
        try:
            guard = _Guard(name) if name != "bad" else {}[name]
        except KeyError:
            continue
        with guard as got:
            caps[name] = got
        LOG.append(name)
    return caps


@cases(("a", ()), ("bad", ()), ("a", ("close",)), ("bad", ("close",)))
def clause_returning_through_a_finally_with_a_try(name, fail):
    # (ctypes.util._findLib_gcc: the clause's return and the code after the inner try
    # each leave through their own copy of the finally)
    try:
        try:
            proc = _Guard(name) if name != "bad" else {}[name]
        except KeyError:
            return None
        trace = proc.name * 2
    finally:
        try:
            if "close" in fail:
                raise FileNotFoundError(name)
            LOG.append("closed")
        except FileNotFoundError:
            pass
    return trace


def _runner(*args):
    if len(args) > 1:
        raise TypeError("too many")
    if args == (2,):
        raise TypeError("not 2")
    return len(args)


@cases((type,), (None,))
def try_directly_in_a_try_after_an_if(kind):
    # (unittest.main.TestProgram.runTests, 3.13: the inner clause's jump out is the outer
    # try's last code; the inner body jumps past both)
    if kind is type:
        try:
            try:
                runner = _runner(1, 2)
            except TypeError:
                runner = _runner(2)
        except TypeError:
            runner = _runner()
    else:
        runner = -1
    result = [runner]
    result.append(kind is type)
    return result


@cases((True, 5), (False, 5), (False, "x"), (True, "x"))
def return_in_try_except_finally_whose_finally_tests(closing, size):
    # (asyncio.proactor_events._loop_reading: the return leaves through the finally's
    # copy, an if of its own, around the except clause)
    length = -1
    try:
        length = size + 1
        if closing:
            return
        LOG.append(length)
    except TypeError as exc:
        LOG.append(type(exc).__name__)
    finally:
        if length > -1:
            LOG.append("received")


@cases((3, False), (0, False), (3, True), (5, "x"))
def loop_with_break_in_a_finally_then_return(value, fail):
    # (asyncio.locks.Semaphore.acquire: each copy of the finally gives the break a copy
    # of what follows the loop, the re-raise and the return)
    state = {"value": value}
    try:
        if fail:
            raise KeyError(fail)
    finally:
        while state["value"] > 0:
            state["value"] -= 2
            if state["value"] == 1:
                break
    return state


@cases((None, False), (2, False), (None, True), (3, True))
def return_through_a_finally_that_holds_a_try_finally(debug, fail):
    # (asyncio.runners.run: the value waits on the stack through both finally copies)
    loop = {"debug": None}
    try:
        if debug is not None:
            loop["debug"] = debug
        return len(loop) + (debug or 0)
    finally:
        try:
            _cancel(fail)
        finally:
            loop.clear()


def _cancel(fail):
    if fail:
        raise KeyError("cancel")
    LOG.append("cancelled")


@cases(([1, 2, 3], False), ([], False), ([2, 4], True))
def loop_with_an_if_in_a_finally(waiters, fail):
    # (asyncio.base_subprocess._call_connection_lost, 3.13: the handler's copy names the
    # if's test in a temporary, the normal copy does not)
    state = {"waiters": waiters}
    try:
        if fail:
            raise OSError(fail)
    finally:
        for waiter in state["waiters"]:
            if not waiter % 2:
                LOG.append(waiter)
        state["waiters"] = None
    return state


@cases(([1, 2, 3], False), ([], False), ([2, 4], True))
def own_name_like_a_temporary_in_a_finally_loop(waiters, fail):
    # (a name of the source's own that reads like the reader's temporaries is kept)
    _t0 = None
    try:
        if fail:
            raise OSError(fail)
    finally:
        for waiter in waiters:
            _t0 = waiter % 2
            if _t0:
                LOG.append(waiter)
    return _t0


def _handled_name():
    # the exception being handled where this is called
    import sys
    exc = sys.exc_info()[1]
    return None if exc is None else type(exc).__name__


def _decode(text, base):
    if base == 1:
        raise TypeError(text)
    return int(text, base)


@cases(("12",), ("z",), ("0x1f",), ("1e3",))
def return_in_a_clause_in_a_clause(text):
    # (email._encoded_words.decode_b) the return's value is computed while the inner
    # exception is handled, then the return ends both clauses
    try:
        return int(text), _handled_name()
    except ValueError:
        try:
            return _decode(text, 1), _handled_name()
        except TypeError:
            return text, [_handled_name()]


@cases(("12",), ("z",), ("0x1f",), ("1e3",), ("1j",))
def returns_in_clauses_three_deep(text):
    try:
        return int(text), []
    except ValueError:
        try:
            return float(text), [_handled_name()]
        except ValueError:
            try:
                return complex(text), [_handled_name(), 3]
            except ValueError:
                return text, [_handled_name()]


@cases(("ok",), ("bad",), ("incomplete",), ("worse",), ("lost",))
def return_none_in_a_clause_in_a_clause_in_a_with(source):
    # (codeop._maybe_compile) each clause of the inner try ends differently: a return
    # through both clauses and the with's exit, or the end of the outer clause
    def compile_(text):
        LOG.append(text)
        if text.startswith("bad"):
            raise SyntaxError(text)
        if text == "incomplete\n":
            raise ValueError(text)
        if text == "worse\n":
            raise SyntaxError(text)
        if text.startswith("lost"):
            raise KeyError(text)
        return text

    with _Guard("warnings"):
        try:
            compile_(source)
        except SyntaxError:
            try:
                compile_(source + "\n")
                return None
            except ValueError as e:
                return None
            except SyntaxError as e:
                pass
    return compile_(source.upper())


class _Lock:
    def __init__(self, fail=False):
        self.fail, self.held = fail, 0

    def acquire(self):
        LOG.append(("acquire", self.held))
        if self.fail:
            raise TimeoutError("lock")
        return self.held + 10

    def release(self):
        self.held += 1


@cases((_Lock(), 2), (_Lock(), 0), (_Lock(fail=True), 3))
def return_through_a_finally_that_holds_a_loop(lock, count):
    # (multiprocessing.synchronize.Condition.wait) the value waits on the stack under
    # the copied loop's iterator
    try:
        return lock.acquire()
    finally:
        LOG.append("woken")
        for i in range(count):
            lock.release()


@cases((_Lock(), 2), (_Lock(fail=True), 1))
def return_through_a_finally_that_is_a_loop(lock, count):
    try:
        return lock.acquire(), count
    finally:
        for i in range(count):
            lock.release()
            LOG.append(lock.held)


def _resolve(path):
    if path.endswith("!"):
        raise OSError(path)
    return path.upper()


def _readlink(path):
    if path.startswith("?"):
        raise OSError(path)
    return path.strip("!")


@cases(("a",), ("b!",), ("?c!",), ("!!",), ("",))
def conditional_return_in_a_try_in_a_clause_in_a_loop(path):
    # (ntpath._getfinalpathname_nonstrict) each arm of the conditional expression
    # returns through the clause's clean-up
    tail = path[:0]
    while path:
        try:
            path = _resolve(path)
            return path + tail if tail else path
        except OSError as ex:
            try:
                new_path = _readlink(path)
                if new_path != path:
                    return new_path + tail if tail else new_path
            except OSError:
                pass
            LOG.append(str(ex))
            path, tail = path[:-1], path[-1:] + tail
    return tail


def _lookup(key, table):
    LOG.append(("lookup", key))
    return table[key]


@cases(("a", {"a": 1}), ("b", {"x": "b", "y": "c"}), ("q", {"x": "b"}), (["u"], {"x": ["u"]}))
def return_from_a_loop_in_a_clause_then_reraise(key, table):
    # (selectors._BaseSelectorImpl._fileobj_lookup) the return's value is named before
    # the clause ends; the loop's one way out is the re-raise
    try:
        return _lookup(key, table)
    except (KeyError, TypeError):
        for name in table:
            if table[name] == key:
                return name.upper()
        raise


@cases(("a", {"a": 1}), ("b", {"x": "b", "y": "c"}), ("q", {"x": "b"}))
def return_from_a_loop_in_a_named_clause(key, table):
    try:
        return _lookup(key, table)
    except KeyError as e:
        for name, value in table.items():
            if value == key:
                return name, e.args
        return None


@cases(("a", {"a": 1}), ("b", {"x": "b", "y": "c"}), ("q", {"x": "b"}))
def return_from_a_loop_in_a_clause_then_more_code(key, table):
    try:
        return _lookup(key, table)
    except KeyError:
        for name in sorted(table):
            if table[name] == key:
                return name.upper()
        LOG.append("not found")
    return "?"


@cases(([["ab", "ac"]], 0), ([["abc", "abd"]], 0), ([["x"]], 0), ([["aa", "ab"]], 1))
def return_from_an_endless_loop_in_a_try(words, j):
    # (_pyrepl.completing_reader.prefix) the value is computed inside the try, the
    # return is outside its range: a return in place, not a break
    (wordlist,) = words
    seen = {}
    i = j
    try:
        while 1:
            for word in wordlist:
                seen[word[i]] = 1
            if len(seen) > 1:
                return wordlist[0][j:i]
            i += 1
            seen = {}
    except IndexError:
        return wordlist[0][j:i]
    return ""


class _Coro:
    def __init__(self, **attrs):
        self.__dict__.update(attrs)


@cases((_Coro(cr_running=1),), (_Coro(gi_running=2),), (_Coro(),))
def constant_return_in_a_clause_in_a_clause(coro):
    # (asyncio.coroutines._format_coroutine.is_running) the inner clause's return
    # unwinds both clauses at its own source position: it is not code after the try
    try:
        return coro.cr_running
    except AttributeError:
        try:
            return coro.gi_running
        except AttributeError:
            return False


class _Proc:
    def __init__(self, pid, returncode=None):
        self.pid = pid
        self.returncode = returncode


def _waitpid(pid):
    if pid < 0:
        raise OSError(pid)
    return pid % 3, pid * 2


@cases((_Proc(3),), (_Proc(4),), (_Proc(-1),), (_Proc(3, 0),))
def code_after_a_try_whose_clause_returns(proc):
    # (multiprocessing.popen_fork.Popen.poll) 3.12+ lays the handler out at the end:
    # code after the statement and an else clause come out alike; people write the first
    if proc.returncode is None:
        try:
            pid, sts = _waitpid(proc.pid)
        except OSError:
            return None
        if pid == proc.pid % 3:
            proc.returncode = sts
    return proc.returncode


@cases(("ab\ncd",), ("",), ("\n\n",))
def code_after_a_try_whose_clause_breaks(src):
    # (tomllib._parser.loads)
    pos = 0
    while True:
        try:
            char = src[pos]
        except IndexError:
            break
        if char == "\n":
            pos += 1
            continue
        pos += 2
    return pos


class _Loop:
    def __init__(self, handler):
        self._exception_handler = handler

    def default_exception_handler(self, context):
        if context == "boom":
            raise ValueError(context)
        if context == "exit":
            raise SystemExit(3)
        LOG.append(("default", str(context)))


class _Logger:
    def error(self, msg, exc_info=False):
        LOG.append((msg, exc_info))


_logger = _Logger()


@cases((None, "ok"), (None, "boom"), (lambda loop, c: loop.default_exception_handler(c), "ok"),
       (lambda loop, c: loop.default_exception_handler(c), "boom"), (None, "exit"))
def clauses_that_fall_off_the_end_of_the_function(handler, context):
    # (asyncio.base_events.BaseEventLoop.call_exception_handler) the implicit return
    # after each clause carries the position of the clause's last statement, as does the
    # clause's POP_EXCEPT: not a return written in the clause
    self = _Loop(handler)
    if self._exception_handler is None:
        try:
            self.default_exception_handler(context)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException:
            _logger.error("Exception in default", exc_info=True)
    else:
        try:
            self._exception_handler(self, context)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            try:
                self.default_exception_handler({"exception": exc})
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException:
                _logger.error("Exception in default exception handler", exc_info=True)


class _Missing(Exception):
    pass


def warn():
    LOG.append("warn")
    if len(LOG) % 2:
        raise _Missing(len(LOG))


@cases(("abc",), (1,), (2,), (None,))
def try_ending_a_clause_that_ends_the_function(r):
    # the inner try's body and its clause each run on into the compiler's copies of
    # the outer clause's end and the implicit return (at the position of 'warn()', as
    # wide as a 'return' statement)
    try:
        a = r.upper
    except AttributeError:
        try:
            warn()
        except _Missing:
            LOG.append(r)


def _acquire(x):
    LOG.append(("acquire", x))
    if x == 3:
        raise ValueError(x)
    if x == 4:
        raise KeyError(x)
    return x


@cases(([1, 0, 3, 4, 2],), ([],), ([0, 0],))
def try_finally_around_a_try_at_the_end_of_a_loop(items):
    # (the end of the if, of both try statements and of the loop's body share one jump
    # back: no 'continue' in the try body or in the clause)
    for x in items:
        try:
            h = x + 1
            if x:
                try:
                    _acquire(x)
                    LOG.append(h)
                except (OSError, ValueError):
                    pass
                finally:
                    LOG.append(("release", x))
        except KeyError:
            LOG.append("key")
    return len(LOG)


@cases(([1, 0, 3, 2],), ([4],), ([],))
def continue_written_at_the_end_of_a_try_finally_body(items):
    for x in items:
        try:
            _acquire(x)
            continue
        finally:
            LOG.append(("release", x))
    return len(LOG)


@cases(([1, 0, 3, 4, 2], None), ([3, 3], str), ([4, 2], repr), ([], None))
def try_else_in_a_loop_whose_clauses_continue(items, onerror):
    # (each clause's end jumps straight back to the loop's head: the end of the try
    # statement is the end of the loop's body, so the code after the body is an else)
    found = []
    for x in items:
        if x:
            try:
                _acquire(x)
            except ValueError:
                if onerror is not None:
                    onerror(x)
            except KeyError:
                if onerror is not None:
                    onerror(x)
                else:
                    raise
            else:
                seen = [y for y in found if y != x]
                found.append((x, len(seen)))
    return found


@cases(([1, 0, 3, 2],), ([],))
def continue_written_at_the_end_of_a_clause_before_code_after(items):
    out = []
    for x in items:
        try:
            _acquire(x)
        except ValueError:
            out.append("v")
            continue
        out.append([y for y in out if y != x])
    return out


@cases(([1, 3, 0, 4, 2], None), ([3, 2], str), ([], None))
def continue_written_after_a_named_clause_before_code_after(items, on_error):
    # (the clause's 'error = None; del error' before its jump back has the continue's
    # position too)
    out = []
    for x in items:
        try:
            _acquire(x)
        except ValueError as error:
            if on_error is not None:
                out.append(on_error(error))
            continue
        with open(__file__) as f:
            out.append(bool(f.readline()) and x)
    return out


class _Dev:
    devnull = "/dev/null"
    O_RDONLY = 0

    def __init__(self, fail):
        self.fail = fail

    def open(self, path, flags):
        if self.fail == "open":
            raise OSError(path)
        return 7

    def close(self, fd):
        LOG.append(("close", fd))


@cases((_Dev(None), {}), (_Dev("open"), {}), (_Dev(None), None))
def try_ending_the_function_whose_clause_passes(os, sys):
    # (3.11: the implicit return is copied into the body's end and into the clause, at
    # the position of 'pass', as wide as 'None')
    try:
        fd = os.open(os.devnull, os.O_RDONLY)
        try:
            sys["stdin"] = fd
        except:  # noqa: E722
            os.close(fd)
            raise
    except (OSError, ValueError):
        pass


class _Files:
    def __init__(self, fail):
        self.fail = fail

    def open(self, name):
        if self.fail == "exists":
            raise FileExistsError(name)
        LOG.append(("open", name))
        return len(name)

    def write(self, fd):
        if self.fail == "write":
            raise OSError(fd)
        LOG.append(("write", fd))

    def close(self, fd):
        LOG.append(("close", fd))

    def unlink(self, name):
        LOG.append(("unlink", name))


@cases((["a", "bb"], _Files(None)), (["a"], _Files("exists")), (["a"], _Files("write")),
       ([], _Files(None)))
def return_after_nested_finally_in_a_try_in_loops(dirlist, os):
    # (the value returned after the finally's copy is loaded after it: 'return dir'
    # follows the try statements, it is not the body's own return)
    for dir in dirlist:
        for seq in range(3):
            name = dir + str(seq)
            try:
                fd = os.open(name)
                try:
                    try:
                        os.write(fd)
                    finally:
                        os.close(fd)
                finally:
                    os.unlink(name)
                return dir
            except FileExistsError:
                pass
    raise FileNotFoundError(dirlist)


@cases(("x", _Files(None)), ("y", _Files("exists")), ("z", _Files("write")))
def return_after_a_finally_in_a_try(name, os):
    try:
        fd = os.open(name)
        try:
            os.write(fd)
        finally:
            os.close(fd)
        return name
    except FileExistsError:
        LOG.append("exists")
    return "none"


def _page(url):
    if url == "bad":
        raise ValueError(url)
    if url == "worse":
        raise KeyError(url)
    return "page " + url


@cases(("",), ("t",), ("bad",), ("worse",), ("x",), ("t=bad",))
def try_in_an_elif_in_a_try_before_a_call(url):
    # (3.13: the inner try's end and its clause's end are two jumps on, each protected
    # by the outer try)
    try:
        if url == "":
            title = "index"
        elif url.startswith("t"):
            try:
                title = _page(url[2:] or url)
            except ValueError:
                title = _page("fallback")
        else:
            title = _page(url)
    except Exception as exc:
        title = repr(exc)
    return len(title), title


class _Elem:
    def __init__(self, text):
        self.text = text


@cases(([_Elem("a")], "d"), ([_Elem(None)], "d"), ([], "d"), ([_Elem(0)], None))
def constant_return_in_a_try_before_its_clause(elems, default):
    # (the compiler loads the constant after leaving the try: its line tells it is the
    # body's own return)
    try:
        elem = next(iter(elems))
        if elem.text is None:
            return ""
        return elem.text
    except StopIteration:
        return default


class _Popen:
    def __init__(self, stdin, secs):
        self.stdin = stdin
        self._secs = secs

    @property
    def secs(self):
        return self._secs

    @secs.setter
    def secs(self, value):  # (logged, not kept: a case's object is shared)
        LOG.append(("secs", value))

    def close(self):
        LOG.append("close")
        if self.stdin == "bad":
            raise OSError("close")

    def wait(self, timeout=None):
        LOG.append(("wait", timeout))
        if timeout == 2:
            raise TimeoutError


@cases((_Popen("x", 1), None), (_Popen("x", 2), KeyboardInterrupt), (_Popen(None, 0), None),
       (_Popen("bad", 1), KeyboardInterrupt), (_Popen("bad", 0), None))
def return_in_an_if_of_a_finally_at_the_function_end(proc, exc_type):
    # (the finally's return and the function's implicit one end the copy's two arms)
    try:
        if proc.stdin:
            proc.close()
    finally:
        if exc_type == KeyboardInterrupt:
            if proc.secs > 0:
                try:
                    proc.wait(proc.secs)
                except TimeoutError:
                    pass
            proc.secs = 0
            return
        proc.wait()


_VERSION: list = [None]


@cases((None, "1.2.3"), (None, None), (None, ""), ("cached", "9.9"))
def return_after_an_if_holding_a_try_whose_clause_passes(cached, found):
    # (3.10 copies the function's last 'return' into the except clause's end: that
    # clause only passes, the return after the 'if' is the one written)
    _VERSION[0] = cached
    if _VERSION[0] is None:
        _VERSION[0] = ""
        try:
            f = iter(found.split("."))
        except AttributeError:
            pass
        else:
            try:
                m = next(f, None)
            finally:
                LOG.append("closed")
            if m is not None:
                _VERSION[0] = m + "!"
    return _VERSION[0]


class _Shelf:
    def __init__(self, closing, syncing=None, resetting=None):
        self.closing, self.syncing, self.resetting = closing, syncing, resetting
        self.dict = "open"

    def sync(self):
        LOG.append("sync")
        if self.syncing is not None:
            raise self.syncing("sync")

    def close_dict(self):
        LOG.append("close")
        if self.closing is not None:
            raise self.closing("close")

    def reset(self):
        if self.resetting is not None:
            raise self.resetting("reset")
        return "closed"


@cases((_Shelf(None),), (_Shelf(AttributeError),), (_Shelf(KeyError),),
       (_Shelf(None, ValueError),), (_Shelf(None, None, OSError),),
       (_Shelf(KeyError, None, OSError),))
def try_finally_whose_finally_holds_a_bare_except(shelf):
    # (3.10: the bare clause in the finally's exceptional copy re-raises the outer
    # exception after its POP_EXCEPT; it is no finally of its own)
    try:
        shelf.sync()
        try:
            shelf.close_dict()
        except AttributeError:
            pass
    finally:
        try:
            shelf.dict = shelf.reset()
        except:  # noqa: E722
            shelf.dict = None
    return shelf.dict


def _hook_for(n):
    def hook(item):
        if item % n:
            raise ImportError(n)
        return n * 100
    return hook


@cases(({1: 5}, [_hook_for(2), _hook_for(3)], 6), ({}, [_hook_for(2), _hook_for(3)], 6),
       ({}, [_hook_for(4), _hook_for(5)], 7), ({}, [], 1), ({}, [_hook_for(2)], 3))
def break_in_a_for_else_in_an_except_clause(cached, hooks, item):
    # (pkgutil.get_importer: 3.10 copies the return after the try into the break, after
    # the clause's end; the loop read it as a return of its own and lost the break)
    cache = dict(cached)
    try:
        found = cache[item]
    except KeyError:
        for hook in hooks:
            try:
                found = hook(item)
                cache.setdefault(item, found)
                break
            except ImportError:
                pass
        else:
            found = None
    return found, cache


@cases(({"k": [9]}, "k", [1, 2, 3]), ({}, "k", [1, 2, 3]), ({}, "k", []), ({}, "q", [4]))
def break_from_a_loop_in_an_except_clause_to_the_clause_code(cache, key, tokens):
    # (xml.etree.ElementPath.iterfind: 3.10's break from the inner clause jumps to the
    # outer clause's code after the loop, its own block)
    cache = dict(cache)
    nxt = iter(tokens).__next__
    try:
        selector = cache[key]
    except KeyError:
        try:
            token = nxt()
        except StopIteration:
            return None
        selector = []
        while 1:
            try:
                selector.append(token * 2)
            except StopIteration:
                raise SyntaxError("invalid path") from None
            try:
                token = nxt()
                if token == 2:
                    token = nxt()
            except StopIteration:
                break
        cache[key] = selector
    result = [key]
    for select in selector:
        result.append(select)
    return result, cache


@cases((1, "12"), (0, "7"), (1, None), (0, "x"), (1, "x"))
def return_of_a_conditional_over_lines_in_a_try(flag, value):
    # (3.10 copies the tuple's build and the return, outside the try's block, into
    # both arms of the conditional: email._encoded_words.decode_b)
    extra = value[:1] if flag else ""
    try:
        return (
            int(value + extra, base=10),
            [abs(flag)] if flag else [],
        )
    except ValueError:
        try:
            return (
                int(value, base=16),
                [flag],
            )
        except ValueError:
            return value, []
    except TypeError:
        return None


@cases(([3, 1, 4, 1, 5], 4), ([3, 1], 9), ([], 0), (None, 1))
def while_loop_with_a_return_in_a_try_finally(items, wanted):
    # (flask's _called_with_wrong_args: the constant return in the loop leaves the try
    # through a copy of the finally, not protected; the try still holds the whole loop)
    i = 0
    try:
        while i < len(items):
            if items[i] == wanted:
                return True
            i += 1
        return False
    finally:
        LOG.append(i)


def _picky(n):
    """Takes exactly ``n`` arguments, up to three; raises IndexError on ``-1``."""
    def call(*args):
        LOG.append(len(args))
        if args and args[0] == -1:
            raise IndexError(len(args))
        if len(args) != n:
            raise TypeError(len(args))
        return sum(args)
    return call


@cases((1, (5, 6, 7), 0), (3, (5, 6, 7), 0), (0, (5, 6), 0), (2, (-1, 1), 0),
       (5, (1, 2), 0), (1, (1, 2), 1))
def endless_loop_of_a_try_whose_clause_continues_before_its_raise(n, args, limit):
    # (pyparsing's _trim_arity wrapper: the loop's code ends with the ``continue``, and
    # the clause's own code, its ``raise``, and the next clause lie after it; 3.10 and
    # 3.11 left them out of the loop)
    func = _picky(n)
    while 1:
        try:
            ret = func(*args[limit:])
            return ret
        except TypeError as te:
            if limit == 1 and not te.args:
                raise
            else:
                if limit < 2:
                    limit += 1
                    continue
                raise
        except IndexError as ie:
            raise ValueError("index", ie) from None


@cases(([1, 2, 3], 2, None), ([1, 2, 3], 5, "end"), ([], 1, "end"), ([4, None], 9, "x"),
       (None, 1, "end"))
def while_loop_returning_a_value_in_a_try_whose_finally_tests(items, wanted, end):
    # (jinja2's Parser.subparse: the value returned is computed inside the try, before
    # the finally's copy, which holds an if; the loop's way there is that return)
    out = []
    try:
        while items:
            item = items.pop(0)
            if item == wanted:
                if end is not None and len(out) > 0:
                    return [item * 10] + out
                out.append(-item)
            else:
                out.append(item + 1)
        out.append(len(out))
    finally:
        if end is not None:
            LOG.append((end, list(out)))
    return out


@cases(([([1, 2], True), ([3, 0, 4], False), ([5], True)], 99),
       ([([1, 2], False), ([7, 8, 9], True), ([6], True)], 8),
       ([([], True), ([0], True)], 5), ([], 1), ([(None, True)], 1), ([([1, "x"], True)], 2))
def for_else_that_continues_in_a_try_finally_in_a_loop(batches, stop_at):
    # (multiprocessing.pool.Pool._handle_tasks: the inner loop's else continues the
    # outer loop and its break breaks it, both through the finally's copies)
    out = []
    for batch, note in batches:
        item = None
        try:
            for item in batch:
                if item == stop_at:
                    out.append("stop")
                    break
                try:
                    out.append(10 // item)
                except ZeroDivisionError as e:
                    out.append(type(e).__name__)
            else:
                if note:
                    out.append(item + 1 if item else -1)
                continue
            break
        finally:
            item = batch = None
            out.append("finally")
    else:
        out.append("done")
    out.append(len(out))
    return out


@cases(([([1, 2], True), ([3, 0, 4], False), ([5], True)], 99),
       ([([1, 2], False), ([7, 8, 9], True), ([6], True)], 8), ([([0], True)], 5), ([], 1))
def for_else_that_continues_in_a_try_finally_in_a_loop_before_the_return(batches, stop_at):
    # (as above, with only the return after the outer loop: the compiler copies it
    # into the way the break takes)
    out = []
    for batch, note in batches:
        try:
            for item in batch:
                if item == stop_at:
                    break
                out.append(10 // item if item else 0)
            else:
                if note:
                    out.append(-1)
                continue
            break
        finally:
            out.append("finally")
    else:
        out.append("done")
    return out


@cases(([5, 0, 2], 2), ([1, "x", 3], 1), ([7, None], 0), ([], 1), ([0, 0], 5))
def while_loop_whose_last_clause_breaks_before_a_for_loop(pending, limit):
    # (socketserver.ForkingMixIn.collect_children: the first clause goes on with the
    # loop, the last one breaks; a for loop with clauses follows)
    seen = []
    while len(pending) > limit:
        try:
            item = pending.pop()
            seen.append(10 // item)
        except ZeroDivisionError:
            seen.append("zero")
        except TypeError:
            break
    for item in list(pending):
        try:
            seen.append(item + 1)
        except TypeError:
            seen.append("type")
        except ValueError:
            pass
    return seen


class _Interrupted:
    """``wait()`` raises KeyboardInterrupt the first ``n`` times; ``run()`` may raise."""

    def __init__(self, n, fail):
        self.n, self.fail = n, fail

    def run(self):
        LOG.append("run")
        if self.fail:
            raise ValueError(self.fail)

    def wait(self):
        LOG.append(("wait", self.n))
        if self.n:
            self.n -= 1
            raise KeyboardInterrupt

    def done(self):
        LOG.append("done")
        return self.n


@cases((0, None), (2, None), (1, "bad"), (0, "bad"))
def finally_that_waits_in_a_loop_until_no_interrupt(n, fail):
    # (click's _pipepager: the finally holds an endless loop whose try's else breaks,
    # code after the statement; the exceptional copy's break goes to its re-raise)
    c = _Interrupted(n, fail)
    try:
        c.run()
    finally:
        while True:
            try:
                c.wait()
            except KeyboardInterrupt:
                pass
            else:
                break
    return c.done()


@cases((0, None), (2, None), (1, "bad"))
def finally_that_waits_in_a_loop_at_the_function_end(n, fail):
    # (as above, with nothing after the statement: the normal copy's break goes to the
    # implicit return, laid out inside the loop's code, and reads as a return there)
    c = _Interrupted(n, fail)
    try:
        c.run()
    finally:
        while True:
            try:
                c.wait()
            except KeyboardInterrupt:
                pass
            else:
                break
