"""Every file read back goes through proofgames.reporting.reading: regular, capped, strict.

These tests call the reading API directly; ``test_unreadable_inputs.py`` runs the command
line on the same bad files.  (All of them fail on the code before issue 34, item 8:
there was no such module, and each reader opened its file as it came.)
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from proofgames.errors import ProofgamesError
from proofgames.reporting import reading
from proofgames.reporting.reading import (
    NoSuchFileError,
    ReadError,
    open_regular,
    parse_json,
    parse_json_lines,
    read_bytes,
    read_json,
    read_json_lines,
    read_text,
)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def _refused_promptly(call, *args) -> str:  # type: ignore[no-untyped-def]
    """``call(*args)``'s ReadError message; fails (instead of hanging) after 10 s."""
    box: dict[str, BaseException] = {}

    def run() -> None:
        try:
            call(*args)
        except BaseException as exc:
            box["exc"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), f"{call.__name__} blocked on {args[0]}"
    exc = box.get("exc")
    assert isinstance(exc, ReadError), exc
    return str(exc)


@needs_fifo
@pytest.mark.parametrize("reader", [read_bytes, read_text, read_json, read_json_lines])
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, reader) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    message = _refused_promptly(reader, fifo, "the store")
    assert message == f"cannot read the store {fifo}: it is a FIFO (named pipe), not a regular file"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_without_being_read() -> None:
    message = _refused_promptly(read_bytes, "/dev/zero", "the --params file")
    assert message.endswith("/dev/zero: it is a character device, not a regular file")


def test_a_directory_and_a_socket_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="it is a directory, not a regular file"):
        read_text(tmp_path, "the README")
    if not hasattr(socket, "AF_UNIX"):
        return
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        try:
            server.bind(str(path))
        except OSError:  # a path too long for a socket on this system
            return
        with pytest.raises(ReadError, match="it is a socket, not a regular file"):
            read_text(path, "the README")


@needs_fifo
def test_a_fifo_swapped_in_after_the_check_is_refused_by_fstat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: ``os.stat`` saw a regular file, ``open`` finds a FIFO; no blocking."""
    fifo, plain = tmp_path / "pipe", tmp_path / "plain"
    os.mkfifo(fifo)
    plain.write_text("{}")
    real_stat = os.stat
    monkeypatch.setattr(reading.os, "stat", lambda p, *a, **k: real_stat(plain))
    message = _refused_promptly(read_text, fifo, "the store")
    assert message.endswith("it is a FIFO (named pipe), not a regular file")


def test_a_missing_file_and_a_bad_name_are_clean_errors(tmp_path: Path) -> None:
    with pytest.raises(NoSuchFileError, match="no such file") as info:
        read_text(tmp_path / "absent.json", "the settings file")
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, ProofgamesError)
    with pytest.raises(ReadError, match="embedded null byte"):
        read_text("bad\x00name", "the store")
    with pytest.raises(ReadError, match=r"'bad\\nname'"):  # an unprintable name is quoted
        read_text("bad\nname", "the store")


def test_the_size_cap_is_checked_before_reading_and_overridable(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"[" + b"0," * 100 + b"0]")
    with pytest.raises(ReadError, match="holds more than 100 bytes, the limit for the log"):
        read_json(path, "the log", max_bytes=100)
    assert len(read_json(path, "the log", max_bytes=203)) == 101
    assert reading.SETTINGS_LIMIT < reading.TEXT_LIMIT < reading.DATA_LIMIT
    assert reading.DATA_LIMIT < reading.CHECKPOINT_LIMIT


def test_a_file_that_grows_past_the_cap_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"x" * 10)
    real_fstat = os.fstat

    def small(fd: int) -> os.stat_result:  # as if stat ran before the file grew
        info = real_fstat(fd)
        return os.stat_result((info.st_mode, *[0] * 5, 5, *info[7:]))

    monkeypatch.setattr(reading.os, "fstat", small)
    with pytest.raises(ReadError, match="holds more than 8 bytes"):
        read_bytes(path, "the log", max_bytes=8)


def test_text_that_is_not_utf8_names_the_byte_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "README.md"
    path.write_bytes(b"# title\nok\ncaf\xe9\n")
    with pytest.raises(ReadError) as info:
        read_text(path, "the README")
    assert str(info.value) == f"the README {path}: not UTF-8 text (byte 14 is 0xe9) on line 3"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a": NaN}', "NaN is not allowed"),
        ("[1, -Infinity]", "-Infinity is not allowed"),
        ('{"a": 1, "a": 1}', "the key 'a' appears twice in one object"),
        ('{"a": {"b": 1, "b": 2}}', "the key 'b' appears twice"),
        ("[1, 2", "Expecting"),
        ("1" * 5000, "Exceeds the limit"),  # Python's cap on an integer's digits
        ("", "Expecting value"),
    ],
)
def test_strict_json_refuses_what_strict_parsers_refuse(text: str, problem: str) -> None:
    with pytest.raises(ReadError, match="not valid JSON") as info:
        parse_json(text, "x.json")
    assert problem in str(info.value) and str(info.value).startswith("x.json: ")


@pytest.mark.parametrize("opener", ["[", '{"a":', '[{"a": '])
def test_deep_nesting_is_refused_before_json_recursion_can_blow(opener: str) -> None:
    for depth in (65, 1_000, 200_000):
        with pytest.raises(ReadError, match="nested deeper than 64 levels"):
            parse_json(opener * depth, "the store, line 2")


def test_the_depth_limit_counts_containers_not_brackets_in_strings() -> None:
    assert parse_json("[" * 64 + "]" * 64, "x") is not None
    assert parse_json('["' + "[" * 500 + '"]', "x") == ["[" * 500]
    assert parse_json('["\\"[[[[", {"k]": "{{{{"}]', "x", max_depth=2) == ['"[[[[', {"k]": "{{{{"}]
    with pytest.raises(ReadError, match="nested deeper than 3 levels"):
        parse_json('{"a": [["\\\\"], [[1]]]}', "x", max_depth=3)


def test_json_lines_name_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n\n{"step": 2}\n{"step": NaN}\n{"step": 4}\n')
    with pytest.raises(ReadError) as info:
        read_json_lines(path, "the metric log")
    assert str(info.value).startswith(f"the metric log {path}, line 4: not valid JSON (NaN")
    path.write_text('{"step": 1}\n' + "[" * 10_000 + "\n")
    with pytest.raises(ReadError, match=r"line 2: not valid JSON \(nested deeper"):
        read_json_lines(path, "the metric log")


def test_a_torn_last_line_is_dropped_only_when_asked_and_only_the_last() -> None:
    text = '{"step": 1}\n{"step": 2}\n{"step": 3, "lo'
    assert parse_json_lines(text, "log", torn_tail=True) == [(1, {"step": 1}), (2, {"step": 2})]
    with pytest.raises(ReadError, match="log, line 3"):
        parse_json_lines(text, "log")
    whole = '{"step": 1}\n{"ste\n{"step": 3}\n'
    with pytest.raises(ReadError, match="log, line 2"):
        parse_json_lines(whole, "log", torn_tail=True)
    ended = '{"step": 1}\n{"st\n'  # a newline follows: written whole, so damaged
    with pytest.raises(ReadError, match="log, line 2"):
        parse_json_lines(ended, "log", torn_tail=True)
    assert parse_json_lines('{"step": 1}', "log", torn_tail=True) == [(1, {"step": 1})]


def test_a_regular_file_is_read_exactly(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    value = {"a": [1, 2.5, None, True, "é\n"], "b": {"c": -0.0}}
    path.write_text(json.dumps(value, ensure_ascii=False) + "\r\n")
    assert read_json(path, "the results file") == value
    assert read_text(path, "x").endswith("\r\n")
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert read_json(link, "the results file") == value
    with open_regular(path, "x") as f:
        assert f.read(1) == b"{"
    started = time.perf_counter()
    big = tmp_path / "big.json"
    big.write_text(json.dumps([[{"k": "[" * 50}] * 10] * 4_000))
    assert len(read_json(big, "x")) == 4_000
    assert time.perf_counter() - started < 30
