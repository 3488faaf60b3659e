# Found by benchmarks/random_programs.py (seed 10000629, node limit 400, depth 7; minimized), Python 3.12.
type a = [a for a in a if (name_3 async for a in name_3) for a in a if '' if [a for name_3 in a]]
