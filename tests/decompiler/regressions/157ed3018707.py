# Found by benchmarks/random_programs.py (seed 9930298, node limit 400, depth 7; minimized), Python 3.12.
type a = a in (lambda: a) != a[a]
