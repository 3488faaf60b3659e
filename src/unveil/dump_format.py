"""What a dump directory holds, as ``unveil.torch`` writes it and ``unveil.report`` reads it:
the status a frame's manifest entry has, and the names Dynamo gives what is in it.

It imports nothing, so that the report can read a dump without importing the torch side.
"""

from __future__ import annotations

import re

# a frame's ``status`` in the manifest
RUNS_OURS = "running unveil's code"
RUNS_DYNAMO = "running Dynamo's code"
RECORDED = "recorded (Dynamo's code ran; the file shows it)"  # unveil.record

COMPILED_FN = re.compile(r"__compiled_fn_\d+")  # a compiled graph's name, without the uuid
RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+$")  # a resume function's code name


def short_name(compiled_fn: str) -> str:
    """``__compiled_fn_7_0d3c...`` -> ``__compiled_fn_7`` (the uuid only makes it unique)."""
    match = COMPILED_FN.match(compiled_fn)
    return match.group(0) if match else compiled_fn


def owner_name(co_name: str) -> str:
    """The user function a resume function continues (``torch_dynamo_resume_in_f_at_12``
    -> ``f``); other names are their own owner."""
    while (match := RESUME.match(co_name)) is not None:
        co_name = match.group(1)
    return co_name
