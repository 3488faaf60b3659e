# Found by benchmarks/random_programs.py (seed 10000145, node limit 400, depth 7; minimized), Python 3.12.
type name_2[*name_4] = (a async for a in a if (a async for a in name_2) async for a in a % name_4 if '' async for name_2 in a)
