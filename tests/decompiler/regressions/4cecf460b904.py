# Found by benchmarks/random_programs.py: pysource-codegen seed 120000295, Python 3.13.0.
# recompile-error in <genexpr>: DecompilationError: recompiled code has co_freevars ('name_0', 'name_1', 'name_3') instead of ('name_0', 'name_1', 'name_2', 'name_3') in <genexpr>
class name_4[*name_2]((0 for () in unique_name_0 if [0 for name_2 in unique_name_1] for [] in 0 if {name_2: 0 for unique_name_2 in unique_name_3} if f'' for [] in 0 if name_2)):
    pass
