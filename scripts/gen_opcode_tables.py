"""Write the running interpreter's opcode facts as JSON: src/unveil/bytecode/opcodes/pyXY.json.

Run it BY the CPython whose table you want (pure standard library; CPython 3.8 to 3.14, also
3.14 in Pyodide: ``node scripts/pyodide_python.mjs scripts/gen_opcode_tables.py --out-dir DIR``):

    python3.X scripts/gen_opcode_tables.py                      # the JSON on stdout
    python3.X scripts/gen_opcode_tables.py --out-dir src/unveil/bytecode/opcodes

Besides ``opcode``'s own facts (opname, the has* sets, cache sizes, binary-op and intrinsic names)
the table holds, as data, how that version's ``dis.get_instructions`` turns an argument into
``argval``: ``jumps`` (per opcode: direction, unit, cache entries skipped, argrepr format) and
``args`` (per opcode: which rule of dis's if/elif chain applies). The rules below were read from
each version's Lib/dis.py (``_get_instructions_bytes``, ``ArgResolver``, ``_unpack_opargs``,
``findlabels``, ``findlinestarts``); src/unveil/bytecode/listing.py and lines.py apply them.
Before 3.11 it also holds ``stack_effects``, what ``dis.stack_effect`` says of each opcode (see
:func:`stack_effects`), which src/unveil/bytecode/exceptions.py needs to find 3.10's handlers.
"""

# Keep this file valid Python 3.8: no match, no X | Y types at run time, no zip(strict=).
from __future__ import annotations

import argparse
import dis
import importlib.util
import json
import opcode
import os
import sys

V = sys.version_info[:2]


def _is_placeholder(name):
    return name.startswith("<") and name.endswith(">")


def _all_opname():
    """opname with the specialized instructions filled in, as dis's ``_all_opname``."""
    names = list(opcode.opname)
    specialized = {}
    if V >= (3, 13):
        specialized = dict(opcode._specialized_opmap)
    elif V >= (3, 11):
        empty = [op for op, name in enumerate(names) if _is_placeholder(name)]
        for op, name in zip(empty, opcode._specialized_instructions):  # noqa: B905 (3.8 has no strict=)
            specialized[name] = op
    for name, op in specialized.items():
        names[op] = name
    return names, specialized


ALL_OPNAME, SPECIALIZED = _all_opname()


def key(op):
    """How per-opcode maps name an opcode: its name, or '<N>' for an unnamed slot."""
    return ALL_OPNAME[op]


def _ops(seq):
    return sorted(set(seq))


def _cache_entries():
    """{base opname: number of inline CACHE code units} (3.11+), zero entries left out."""
    if V < (3, 11):
        return {}
    entries = opcode._inline_cache_entries
    if isinstance(entries, dict):  # 3.13+: keyed by name
        return {name: n for name, n in sorted(entries.items()) if n}
    return {opcode.opname[op]: n for op, n in enumerate(entries) if n}


CACHES = _cache_entries()


def _has_arg(op):
    if V >= (3, 12):
        return op in opcode.hasarg
    return op >= opcode.HAVE_ARGUMENT


def _is_backward(op):
    if V < (3, 11):
        return False
    return bool(dis._is_backward_jump(op))


def jumps():
    """Per jump opcode (hasjrel and hasjabs: what findlabels and argval use)."""
    out = {}
    for op in _ops(list(opcode.hasjrel) + list(opcode.hasjabs)):
        if op > 255:
            continue  # pseudo instructions never reach the bytecode
        absolute = op in opcode.hasjabs
        rule = {
            "kind": "absolute" if absolute else ("backward" if _is_backward(op) else "forward"),
            # 3.8/3.9: arguments count bytes; 3.10+: code units
            "unit": 1 if V < (3, 10) else 2,
            # 3.12+: a relative jump starts after the instruction's inline caches
            "caches": CACHES.get(opcode.opname[op], 0) if V >= (3, 12) and not absolute else 0,
        }
        if V >= (3, 13):  # labels numbered in offset order
            rule["repr"] = ("from" if opcode.opname[op] == "END_ASYNC_FOR" else "to") + " L{label}"
        elif absolute and V < (3, 10):
            rule["repr"] = ""  # 3.8/3.9: hasjabs is not in the argval chain (argval = arg)
        else:
            rule["repr"] = "to {offset}"
        out[key(op)] = rule
    return out


def _arg_rule(op):
    """The branch of this version's argval chain that ``op`` (a base opcode) takes, or None."""
    name = opcode.opname[op]
    if op in opcode.hasconst:
        if V == (3, 11) and name != "LOAD_CONST":
            return {"kind": "unknown"}  # 3.11's _get_const_value: only LOAD_CONST is looked up
        return {"kind": "const"}
    if op in opcode.hasname:
        shifts = {}
        if V >= (3, 11):
            shifts["LOAD_GLOBAL"] = (1, "NULL + {}" if V < (3, 13) else "{} + NULL")
        if V >= (3, 12):
            flag = "NULL|self + {}" if V < (3, 13) else "{} + NULL|self"
            shifts["LOAD_ATTR"] = (1, flag)
            shifts["LOAD_SUPER_ATTR"] = (2, flag)
        if name in shifts:
            return {"kind": "name", "shift": shifts[name][0], "flag": shifts[name][1]}
        return {"kind": "name"}
    if V >= (3, 13):
        if op in opcode.hasjump or op in opcode.hasexc:
            return {"kind": "jump"}
        if name in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW",
                    "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"):
            return {"kind": "local_pair"}
    elif V >= (3, 10) and op in opcode.hasjabs:
        return {"kind": "jump"}
    elif op in opcode.hasjrel:
        return {"kind": "jump"}
    if V >= (3, 11):
        if op in opcode.haslocal or op in opcode.hasfree:
            return {"kind": "localsplus"}
    elif op in opcode.haslocal:
        return {"kind": "varname"}
    if op in opcode.hascompare:
        rule = {"kind": "compare", "shift": 0 if V < (3, 12) else (4 if V == (3, 12) else 5)}
        if V >= (3, 13):
            rule["bool_flag"] = 16
        return rule
    if V < (3, 11) and op in opcode.hasfree:
        return {"kind": "cellname"}  # index into co_cellvars + co_freevars
    named = {
        "FORMAT_VALUE": "format_value", "CONVERT_VALUE": "convert_value",
        "MAKE_FUNCTION": "function_flags", "SET_FUNCTION_ATTRIBUTE": "function_flags",
        "BINARY_OP": "binary_op", "CALL_INTRINSIC_1": "intrinsic1",
        "CALL_INTRINSIC_2": "intrinsic2", "LOAD_COMMON_CONSTANT": "common_constant",
        "LOAD_SPECIAL": "special_method", "IS_OP": "is_op", "CONTAINS_OP": "contains_op",
    }
    kind = named.get(name)
    if kind == "format_value" and V >= (3, 13):
        kind = None
    if kind == "function_flags" and (name == "MAKE_FUNCTION") != (V < (3, 13)):
        kind = None
    if kind == "binary_op" and V < (3, 11):
        kind = None
    if kind in ("intrinsic1", "intrinsic2") and V < (3, 12):
        kind = None
    if kind in ("common_constant", "special_method", "is_op", "contains_op") and V < (3, 14):
        kind = None
    return {"kind": kind} if kind else None


def args():
    out = {}
    for op in range(min(256, len(opcode.opname))):
        if op in SPECIALIZED.values() or not _has_arg(op):
            continue
        rule = _arg_rule(op)
        if rule is not None:
            out[key(op)] = rule
    return out


# The stack effects (before 3.11) that are neither constant nor linear in the argument, as
# CPython's compile.c (stack_effect) computes them; each is checked against dis below.
_STACK_FORMULAS = {
    "UNPACK_EX": "(arg & 255) + (arg >> 8)",
    "MAKE_FUNCTION": "-1 - (arg & 1) - (arg >> 1 & 1) - (arg >> 2 & 1) - (arg >> 3 & 1)",
    "BUILD_SLICE": "-2 if arg == 3 else -1",
    "FORMAT_VALUE": "-(arg >> 2 & 1)",
    "CALL_FUNCTION_EX": "-1 - (arg & 1)",
}

# the arguments each effect is checked at here (tests/test_opcode_tables.py checks every
# argument up to 2**16 + 256 against dis once more, with unveil's own reading of the table)
_PROBES = list(range(1024)) + [b + d for b in (2 ** k for k in range(10, 30)) for d in (-1, 0, 1)]


def _linear(c, s):
    """The formula ``c + s * arg`` as written in the table (an int when ``s`` is 0)."""
    if s == 0:
        return c
    term = "arg" if abs(s) == 1 else f"{abs(s)} * arg"
    if c == 0:
        return term if s > 0 else f"-{term}"
    return f"{term} {'+' if c > 0 else '-'} {abs(c)}" if s > 0 else f"{c} - {term}"


def _effect_of(op, jump):
    """This opcode's stack effect as an int or a formula in ``arg``, checked against dis."""
    name = opcode.opname[op]
    if not _has_arg(op):
        return dis.stack_effect(op, jump=jump)
    formula = _STACK_FORMULAS.get(name)
    if formula is None:
        c = dis.stack_effect(op, 0, jump=jump)
        formula = _linear(c, dis.stack_effect(op, 1, jump=jump) - c)
    for arg in _PROBES:
        theirs = dis.stack_effect(op, arg, jump=jump)
        ours = formula if isinstance(formula, int) else eval(formula, {"arg": arg})  # noqa: S307
        if ours != theirs:
            raise SystemExit(f"{name}: dis.stack_effect gives {theirs} for argument {arg}, the "
                             f"formula {formula!r} {ours}: add its formula to _STACK_FORMULAS")
    return formula


def stack_effects():
    """Per named opcode (before 3.11): its ``dis.stack_effect``, one int or formula in ``arg``
    (``"arg - 1"``, ``"-2 if arg == 3 else -1"``: ints, ``arg``, ``+ - * & >>``, ``x if arg ==
    k else y``), or ``[without jump, with jump]`` where the jump changes it. ``jump=None``, dis's
    default, is the larger of the two."""
    out = {}
    for op in range(min(256, len(opcode.opname))):
        if _is_placeholder(opcode.opname[op]):
            continue
        effects = [_effect_of(op, False), _effect_of(op, True)]
        out[key(op)] = effects[0] if effects[0] == effects[1] else effects
    return out


def _function_flags():
    if V >= (3, 13):
        return list(dis.FUNCTION_ATTR_FLAGS)
    return list(dis.MAKE_FUNCTION_FLAGS)


def _intrinsics(n):
    descs = getattr(opcode, f"_intrinsic_{n}_descs", None)
    if descs is None:
        descs = getattr(dis, f"_intrinsic_{n}_descs", None)
    return None if descs is None else list(descs)


def table():
    magic = importlib.util.MAGIC_NUMBER
    sets = {}
    for name in ("hasarg", "hasconst", "hasname", "hasjrel", "hasjabs", "hasjump", "haslocal",
                 "hasfree", "hascompare", "hasexc", "hasnargs"):
        if hasattr(opcode, name):
            sets[name] = _ops(getattr(opcode, name))
    specializations = getattr(opcode, "_specializations", None)
    t = {
        "version": list(V),
        "implementation": sys.implementation.name,
        "magic": magic.hex(),
        "magic_number": int.from_bytes(magic[:2], "little"),
        "HAVE_ARGUMENT": opcode.HAVE_ARGUMENT,
        "EXTENDED_ARG": opcode.EXTENDED_ARG,
        "opname": [None if _is_placeholder(n) else n for n in opcode.opname],
        "specialized_opmap": dict(sorted(SPECIALIZED.items(), key=lambda kv: kv[1])),
        "specializations": None if specializations is None else
            {base: list(family) for base, family in specializations.items()},
        "cmp_op": list(opcode.cmp_op),
        "nb_ops": [list(p) for p in getattr(opcode, "_nb_ops", None) or []] or None,
        "intrinsic1": _intrinsics(1),
        "intrinsic2": _intrinsics(2),
        "special_method_names": list(getattr(opcode, "_special_method_names", None) or []) or None,
        "common_constants": [c.__name__ if isinstance(c, type) else repr(c)
                             for c in getattr(opcode, "_common_constants", None) or []] or None,
        "function_flags": _function_flags(),
        "inline_cache_entries": CACHES or None,
        "cache_format": {k: dict(v) for k, v in opcode._cache_format.items()}
            if hasattr(opcode, "_cache_format") else None,
    }
    t.update(sets)
    t["rules"] = {
        # which test says that an opcode has an argument
        "arg": "hasarg" if V >= (3, 12) else "have_argument",
        # 3.11+: EXTENDED_ARG accumulates into a signed 32-bit int (dis's _INT_OVERFLOW)
        "extended_arg_bits": 32 if V >= (3, 11) else None,
        # 3.10+: an instruction without argument clears a pending EXTENDED_ARG
        "extended_arg_resets": V >= (3, 10),
        # local and free indexes: 3.11+ all index localsplus (varnames, cells not in varnames,
        # freevars); before, haslocal indexes co_varnames and hasfree co_cellvars + co_freevars
        "localsplus": V >= (3, 11),
        # co_lnotab (3.8/3.9), 3.10's co_linetable, 3.11+'s location table
        "line_table": "lnotab" if V < (3, 10) else ("linetable" if V == (3, 10) else "locations"),
        # 3.13+: findlinestarts also reports starts of ranges without a line (None)
        "line_starts_none": V >= (3, 13),
    }
    t["jumps"] = jumps()
    t["args"] = args()
    if V < (3, 11):  # (3.11+'s handlers are in co_exceptiontable: no need of stack effects)
        t["stack_effects"] = stack_effects()
    return t


def dumps(t):
    """One top-level key per line; the entries of the big maps and lists one per line too."""
    def compact(v):
        return json.dumps(v, separators=(", ", ": "))

    lines = []
    for k, v in t.items():
        if isinstance(v, dict) and v:
            inner = ",\n".join(f"  {json.dumps(k2)}: {compact(v2)}" for k2, v2 in v.items())
            lines.append(f" {json.dumps(k)}: {{\n{inner}\n }}")
        elif k == "opname":
            inner = ",\n".join("  " + compact(x) for x in v)
            lines.append(f" {json.dumps(k)}: [\n{inner}\n ]")
        else:
            lines.append(f" {json.dumps(k)}: {compact(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", help="write pyXY.json there instead of to stdout")
    ns = parser.parse_args()
    text = dumps(table())
    if ns.out_dir:
        path = os.path.join(ns.out_dir, f"py{V[0]}{V[1]}.json")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print(path)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
