# Found by benchmarks/random_programs.py (seed 10004949, node limit 400, depth 7; minimized), Python 3.12.
class name_0(a[a], **a, name_1=(a := (lambda *name_0: a))):
    a
