# Found by benchmarks/random_programs.py (seed 10006583, node limit 400, depth 7; minimized), Python 3.11.
async def name_4(name_2):

    class name_1:

        @name_2
        def name_1(**name_4: a) -> a:
            pass
        try:
            pass
        except* a as name_2:
            pass
