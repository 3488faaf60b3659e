# Found by benchmarks/random_programs.py: pysource-codegen seed 31000277, Python 3.12.1.
# compile-error in <module>: SyntaxError: comprehension inner loop cannot rebind assignment expression target 'name_3' (<unveil <module>>, line 3)
(0 for unique_name_0 in unique_name_1 if (name_3 := 0) for () in f'' if {0: 0 for name_3 in unique_name_2} for unique_name_3 in 0 if ())
