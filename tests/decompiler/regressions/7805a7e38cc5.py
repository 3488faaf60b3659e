# Found by benchmarks/random_programs.py (seed 9820028, node limit 400, depth 7; minimized), Python 3.13.
type a[name_2] = {{a for name_2 in a}: lambda *name_3: name_2}
