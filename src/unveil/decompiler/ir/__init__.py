"""The IR every phase reads: expression values of the symbolic stack (``exprs``), the
decompiler's own statement and construct markers (``markers``), the facts it attaches to
``ast`` nodes (``facts``) and the plain-``ast`` helpers all phases share (``nodes``)."""
