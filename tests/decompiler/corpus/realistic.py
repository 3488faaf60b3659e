"""Realistic utility functions of the kind found in everyday code bases."""

import json
import re
from collections import defaultdict

from ._support import cases, kw

LOG: list = []
_CACHE: dict = {}


@cases(("name=ann\nage = 3\n# comment\n\nbad line",), ("",))
def parse_config(text):
    config = {}
    errors = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            errors.append(f"line {lineno}: missing '='")
            continue
        key, _, value = line.partition("=")
        config[key.strip()] = value.strip()
    return config, errors


@cases(("Hello, World!",), ("  multiple   spaces ",), ("",))
def slugify(text):
    text = text.lower().strip()
    text = re.sub(r"[^a-z0-9\s-]", "", text)
    return re.sub(r"[\s-]+", "-", text).strip("-")


@cases(([{"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "a", "v": 3}], "k"),
       ([], "k"), ([{"x": 1}], "k"))
def group_by(rows, key):
    groups = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row)
    return {k: [r["v"] for r in v] for k, v in groups.items()}


@cases(('{"a": [1, 2, {"b": null}]}',), ("[1, 2",), ('"str"',))
def safe_json(text):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return {"error": e.msg, "pos": e.pos}
    return {"ok": data}


@cases((10,), (1,), (0,))
def memo_fib(n):
    if n in _CACHE:
        return _CACHE[n]
    result = n if n < 2 else memo_fib(n - 1) + memo_fib(n - 2)
    _CACHE[n] = result
    return result


@cases(([5, 2, 9, 1, 5, 6],), ([],), ([1],))
def merge_sort(items):
    if len(items) <= 1:
        return list(items)
    mid = len(items) // 2
    left, right = merge_sort(items[:mid]), merge_sort(items[mid:])
    merged = []
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    merged.extend(left[i:])
    merged.extend(right[j:])
    return merged


@cases(("()[]{}",), ("([)]",), ("((",), ("",), ("a(b)c",))
def balanced(text):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack


@cases(({"a": {"b": {"c": 1}}}, "a.b.c"), ({"a": {}}, "a.b.c"), ({"a": [1, 2]}, "a.1"),
       ({"a": [1]}, "a.x"), ({"a": 1}, "a.b"), kw({}, "q", default="d"))
def deep_get(data, path, default=None):
    current = data
    for part in path.split("."):
        if isinstance(current, dict):
            if part not in current:
                return default
            current = current[part]
        elif isinstance(current, list):
            try:
                current = current[int(part)]
            except (ValueError, IndexError):
                return default
        else:
            return default
    return current


@cases(("3 + 4 * 2",), ("10 / 2 - 1",), ("2 * (3 + 4)",), ("1 +",), ("7 / 0",))
def tiny_calculator(expr):
    tokens = re.findall(r"\d+|[-+*/()]", expr)
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        tok = peek()
        if tok is None:
            raise SyntaxError("unexpected end")
        pos += 1
        return tok

    def atom():
        tok = take()
        if tok == "(":
            value = expression()
            take()
            return value
        return int(tok)

    def term():
        value = atom()
        while peek() in ("*", "/"):
            op = take()
            rhs = atom()
            value = value * rhs if op == "*" else value / rhs
        return value

    def expression():
        value = term()
        while peek() in ("+", "-"):
            op = take()
            rhs = term()
            value = value + rhs if op == "+" else value - rhs
        return value

    return expression()


@cases(([3, 4, 3, 1, 4, 4],), ([],))
def frequencies(items):
    counts = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:2]


@cases(("The quick brown fox jumps over the lazy dog", 10), ("short", 10), ("", 5))
def wrap_text(text, width):
    lines, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


@cases(([("a", 3), ("b", 1)], 2), ([], 1), ([("x", 1)], 0))
def top_n(pairs, n):
    if n <= 0:
        raise ValueError("n must be positive")
    return [name for name, _ in sorted(pairs, key=lambda p: p[1], reverse=True)[:n]]


@cases((kw("GET", "/users/42")), kw("POST", "/users"), kw("GET", "/nope"), kw("DELETE", "/users/1"))
def route(method, path):
    routes = [
        ("GET", r"^/users/(\d+)$", lambda uid: {"user": int(uid)}),
        ("POST", r"^/users$", lambda: {"created": True}),
    ]
    for verb, pattern, handler in routes:
        m = re.match(pattern, path)
        if m and verb == method:
            return 200, handler(*m.groups())
        if m:
            return 405, None
    return 404, None


@cases(([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 3),)
def paginate(items, per_page):
    pages = []
    for start in range(0, len(items), per_page):
        page = items[start:start + per_page]
        pages.append({"page": start // per_page + 1, "items": page, "last": start + per_page >= len(items)})
    return pages


@cases(("192.168.0.1",), ("256.1.1.1",), ("1.2.3",), ("a.b.c.d",))
def parse_ipv4(address):
    parts = address.split(".")
    if len(parts) != 4:
        raise ValueError(f"expected 4 parts, got {len(parts)}")
    octets = []
    for part in parts:
        if not part.isdigit():
            raise ValueError(f"not a number: {part!r}")
        value = int(part)
        if not 0 <= value <= 255:
            raise ValueError(f"out of range: {value}")
        octets.append(value)
    return tuple(octets)


@cases(({"b": 1, "a": {"d": 2, "c": [3, {"e": 4}]}},),)
def flatten_dict(data, prefix=""):
    out = {}
    for key, value in data.items():
        full = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            out.update(flatten_dict(value, full))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    out.update(flatten_dict(item, f"{full}[{i}]"))
                else:
                    out[f"{full}[{i}]"] = item
        else:
            out[full] = value
    return out


@cases(([[0, 1, 0], [0, 0, 0], [1, 1, 0]], (0, 0), (2, 2)), ([[0, 1], [1, 0]], (0, 0), (1, 1)))
def grid_path(grid, start, goal):
    from collections import deque

    rows, cols = len(grid), len(grid[0])
    queue = deque([(start, 0)])
    seen = {start}
    while queue:
        (r, c), dist = queue.popleft()
        if (r, c) == goal:
            return dist
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nr, nc = r + dr, c + dc
            if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == 0 and (nr, nc) not in seen:
                seen.add((nr, nc))
                queue.append(((nr, nc), dist + 1))
    return -1


@cases(("aaabccdddd",), ("",), ("abc",))
def run_length(text):
    if not text:
        return ""
    out = []
    prev, count = text[0], 1
    for ch in text[1:]:
        if ch == prev:
            count += 1
        else:
            out.append(f"{prev}{count if count > 1 else ''}")
            prev, count = ch, 1
    out.append(f"{prev}{count if count > 1 else ''}")
    return "".join(out)


@cases(([("push", 1), ("push", 2), ("pop",), ("peek",), ("pop",), ("pop",)],),
       ([("push", 1), ("peek",), ("jump", 3)],), ([("peek",)],))
def command_interpreter(commands):
    stack, output = [], []
    for cmd, *args in commands:
        if cmd == "push":
            stack.extend(args)
        elif cmd == "pop":
            output.append(stack.pop() if stack else "empty")
        elif cmd == "peek":
            output.append(stack[-1] if stack else None)
        else:
            raise ValueError(cmd)
    return output, stack


@cases((1234.5678, "USD"), (-0.5, "EUR"), (0, "JPY"))
def format_money(amount, currency):
    symbols = {"USD": "$", "EUR": "€"}
    symbol = symbols.get(currency, currency + " ")
    sign = "-" if amount < 0 else ""
    decimals = 0 if currency == "JPY" else 2
    return f"{sign}{symbol}{abs(amount):,.{decimals}f}"


@cases(([3, 30, 34, 5, 9],), ([0, 0],))
def largest_number(nums):
    import functools

    def compare(a, b):
        return (a + b < b + a) - (a + b > b + a)

    strs = sorted(map(str, nums), key=functools.cmp_to_key(compare))
    result = "".join(strs)
    return "0" if result[0] == "0" else result


@cases(("2024-02-29",), ("2023-02-29",), ("2024-13-01",), ("bad",))
def validate_date(text):
    try:
        year, month, day = (int(p) for p in text.split("-"))
    except ValueError:
        return "malformed"
    if not 1 <= month <= 12:
        return "bad month"
    days = [31, 29 if year % 4 == 0 and (year % 100 or year % 400 == 0) else 28, 31, 30, 31,
            30, 31, 31, 30, 31, 30, 31]
    return "ok" if 1 <= day <= days[month - 1] else "bad day"


@cases((["b", "a", "c"], ["a", "d"]),)
def diff_lists(old, new):
    old_set, new_set = set(old), set(new)
    added = [x for x in new if x not in old_set]
    removed = [x for x in old if x not in new_set]
    kept = sorted(old_set & new_set)
    return {"added": added, "removed": removed, "kept": kept}


@cases(("CamelCaseString",), ("already_snake",), ("HTTPServer",))
def camel_to_snake(name):
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


@cases(([1, 2, 3], 2), ([1, 2, 3], 5), ([], 1))
def sliding_window_sums(values, k):
    if k > len(values):
        return []
    window = sum(values[:k])
    sums = [window]
    for i in range(k, len(values)):
        window += values[i] - values[i - k]
        sums.append(window)
    return sums


@cases(({"x": 1, "y": 2}, {"y": 3, "z": 4}), ({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}, "d": {}}))
def merge_configs(base, override):
    merged = dict(base)
    for key, value in override.items():
        if key in merged and isinstance(merged[key], dict) and isinstance(value, dict):
            merged[key] = merge_configs(merged[key], value)
        else:
            merged[key] = value
    LOG.append(sorted(merged))
    return merged
