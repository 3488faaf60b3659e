# Found by benchmarks/random_programs.py: pysource-codegen seed 33001494, Python 3.12.1.
# recompile-error in <module>: SystemError: compiler_lookup_arg(name='__classdict__') with reftype=3 failed in <generic parameters of name_4>; freevars of code name_4: ('__classdict__',)
class name_4:
    try:
        type unique_name_0 = unique_name_1
    except:
        pass
    finally:
        while unique_name_2:
            pass
        pass
