# Found by benchmarks/random_programs.py: pysource-codegen seed 33002568, Python 3.12.1.
# worker-died in <module>: worker process killed by SIGSEGV
class name_4:
    try:
        unique_name_0
    except* 0:
        pass
    else:

        class name_1[*name_1]:
            pass
