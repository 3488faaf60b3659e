# Found by benchmarks/random_programs.py: pysource-codegen seed 73005818, Python 3.10.13.
# crash in <module>: SyntaxError: invalid syntax (<unknown>, line 3)
{0 for unique_name_3 in name_5} if unique_name_0 else {0 for unique_name_5 in name_5}
