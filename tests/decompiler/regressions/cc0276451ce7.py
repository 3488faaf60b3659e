# Found by benchmarks/random_programs.py (seed 10000786, node limit 400, depth 7; minimized), Python 3.12.
type a = [a for a in a if (name_2 async for a in a) for a in a if () for a in a if [a for name_2 in a]]
