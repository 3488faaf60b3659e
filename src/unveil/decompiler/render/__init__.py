"""IR to plain ``ast`` (``renderer``, with ``primitives`` and ``privates``) and ``ast`` to
source (``emit``)."""
