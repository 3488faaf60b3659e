# Found by benchmarks/random_programs.py: pysource-codegen seed 2806952, Python 3.12.1.
# decompile-error in <module>: DecompilationError: comprehension not recognised: loop body is not one statement in <module>
[[name_4] for () in () if unique_name_0 for [] in b'']
