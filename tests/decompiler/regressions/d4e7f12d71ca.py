# Found by benchmarks/random_programs.py (seed 9820389, node limit 400, depth 7; minimized), Python 3.13.
async def name_2(*name_2: a) -> a:
    [a for a in a async for a in a]
