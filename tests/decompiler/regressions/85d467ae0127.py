# Shape found by benchmarks/random_programs.py (3.12 seed 9710314, node limit 400, depth 7), written by hand: async comprehensions nested in plain ones.
async def f(n, AsyncRange):
    return {i: [j async for j in AsyncRange(i)] for i in range(n)}


async def g(n, AsyncRange):
    return [[(j, [k async for k in AsyncRange(j)]) async for j in AsyncRange(i)] for i in n]
