# Found by benchmarks/random_programs.py: pysource-codegen seed 9950 (shortened by hand), Python 3.14.
type name_2[name_5, *name_4, *name_3] = [name_2, name_2, name_4]
