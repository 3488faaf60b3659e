"""``unveil report`` and ``unveil diff`` on dumps that are damaged or not unveil's (no
torch): each bad part is one sentence (printed, and in the report's "What is missing"),
and the rest of the dump is still reported."""

from __future__ import annotations

import json
import marshal
import sys
from pathlib import Path
from typing import Any

import pytest

from test_diff import frame, write_dump
from unveil.cli import main
from unveil.dump_format import FORMAT, FrameRecord, checked
from unveil.torch.record import MAGIC

GOOD = "__transformed_code_0_for_f.py"


def report(capsys: pytest.CaptureFixture[str], directory: Path) -> tuple[int, str, str]:
    status = main(["report", str(directory)])
    out, err = capsys.readouterr()
    return status, out, err


def edit_manifest(directory: Path, change: Any) -> None:
    path = directory / "manifest.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def reported(directory: Path) -> str:
    return (directory / "report.html").read_text()


def test_a_null_frame_is_one_sentence_and_the_rest_is_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = write_dump(tmp_path / "d", [frame("0/0")])
    edit_manifest(dump, lambda d: d["frames"].insert(0, None))
    status, out, err = report(capsys, dump)
    assert status == 0, err
    assert "internal error" not in err
    sentence = "manifest.json: frames[0] is null, not a record: left out"
    assert f"note: {sentence}" in out
    assert sentence in reported(dump)
    assert GOOD in reported(dump)  # the good frame is there, with its code
    assert "__compiled_fn_1" in reported(dump)


def test_fields_of_the_wrong_type_are_named_and_ignored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = write_dump(tmp_path / "d", [frame("0/0")])

    def damage(data: dict[str, Any]) -> None:
        data["frames"][0]["graphs"] = "oops"
        data["frames"][0]["guards"] = [1, 2]
        data["frames"][0]["graph_breaks"].append(7)
        data["functions"] = {"not": "a list"}
        data["errors"].append(None)
    edit_manifest(dump, damage)
    status, out, err = report(capsys, dump)
    assert status == 0, err
    for sentence in ("manifest.json: frames[0]: 'graphs' is a str, not "
                     "list[dict[str, Any]]: ignored",
                     "manifest.json: frames[0]: 'guards' is a list, not list[str]: ignored",
                     "manifest.json: frames[0].graph_breaks[1] is an int, not a record: "
                     "left out",
                     "manifest.json: 'functions' is not a list: ignored",
                     "manifest.json: errors[0] is not a sentence: left out"):
        assert f"note: {sentence}" in out, out
    html = reported(dump)
    assert GOOD in html and "Failed to trace builtin operator" in html


def test_many_bad_parts_are_counted_after_the_first_ten(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = write_dump(tmp_path / "d", [frame("0/0")])
    edit_manifest(dump, lambda d: d["frames"].extend([None] * 25))
    status, out, _ = report(capsys, dump)
    assert status == 0
    assert out.count("is null, not a record") == 10
    assert "and 15 more parts that are not what unveil writes" in out


def test_a_manifest_of_a_newer_layout_is_said_and_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = write_dump(tmp_path / "d", [frame("0/0")])
    edit_manifest(dump, lambda d: d.update(format=FORMAT + 1, unveil_version="9.0"))
    status, out, _ = report(capsys, dump)
    assert status == 0
    assert (f"written by unveil 9.0 in layout {FORMAT + 1}, newer than this unveil reads "
            f"({FORMAT})") in out
    assert GOOD in reported(dump)


def recording(directory: Path, pid: int, body: bytes, header: bytes | None = None) -> Path:
    if header is None:
        header = MAGIC + b" 2 python %d.%d\n" % sys.version_info[:2]
    path = directory / f"recording_{pid}.marshal"
    path.write_bytes(header + body)
    return path


def test_random_bytes_in_a_recording(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    dump = write_dump(tmp_path / "d", [frame("0/0")])
    junk = recording(dump, 11, bytes(range(256)) * 4, header=b"")
    damaged = recording(dump, 12, b"\xff\x00garbage")
    status, out, err = report(capsys, dump)
    assert status == 0, err
    assert "internal error" not in err
    assert ("recording_11.marshal is not a recording this unveil wrote (an older unveil's, "
            "or another file): left out of the report") in err
    assert "recording_12.marshal is damaged (bad marshal data" in err
    assert "its frames are left out of the report" in out  # (in the summary's notes too)
    assert GOOD in reported(dump)
    assert junk.exists() and damaged.exists()  # left where they were


def test_a_recording_of_another_python_names_the_python_to_use(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = write_dump(tmp_path / "d", [frame("0/0")])
    other = "3.7"  # (a version whose code unveil does not read: 3.8-3.14's it reads)
    recording(dump, 13, marshal.dumps({"frames": []}),
              header=MAGIC + b" 2 python " + other.encode() + b"\n")
    status, _, err = report(capsys, dump)
    here = "{}.{}".format(*sys.version_info[:2])
    assert status == 0
    assert (f"recording_13.marshal was recorded by Python {other} and this is Python "
            f"{here}: report it with Python {other} (python{other} -m unveil report "
            f"{dump}); only that Python reads its code") in err


def test_a_recording_of_valid_marshal_but_no_recording_data(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = write_dump(tmp_path / "d", [frame("0/0")])
    recording(dump, 14, marshal.dumps([1, 2, 3]))
    recording(dump, 15, marshal.dumps({"frames": [], "format": 2}))  # (no "pid", ...)
    status, _, err = report(capsys, dump)
    assert status == 0, err
    assert "recording_14.marshal is damaged (not a recording's data)" in err
    assert "recording_15.marshal could not be written out (KeyError: 'pid')" in err


def test_diff_of_a_damaged_dump_compares_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_dump(tmp_path / "a", [frame("0/0")])
    b = write_dump(tmp_path / "b", [frame("0/0")])
    edit_manifest(b, lambda d: d["frames"].append(None))
    recording(b, 16, b"\x00")
    status = main(["diff", str(a), str(b)])
    out, err = capsys.readouterr()
    assert status == 0, out  # the same frames, once the bad parts are left out
    assert "manifest.json: frames[1] is null, not a record: left out" in out
    assert "recording_16.marshal is damaged" in err and "recording_16.marshal" in out


def test_checked_fills_what_is_missing() -> None:
    entry, problems = checked({"compile_id": "0/0", "function": "f"}, FrameRecord, "x")
    assert entry is not None and entry["graphs"] == [] and entry["hits"] is None
    assert entry["qualname"] is None  # (required, so named)
    assert "x has no 'qualname'" in problems
    assert checked(frame("0/0"), FrameRecord, "x")[1] == []  # what unveil writes: no problem
