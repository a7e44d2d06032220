"""GSM8K from Hugging Face (``hf:``): downloaded once through ``datasets``, then read as a file.

``datasets`` and the network are not here: a stand-in module plays ``load_dataset``, and
the tests check what proofgames does around it (the cache, the strict reading, the errors).
"""

from __future__ import annotations

import sys
import types

import pytest

from proofgames.language.gsm8k import CACHE_ENV, DataError, hf_problems, load_gsm8k

ROWS = [
    {"question": "Ann has 3 pens and buys 4. How many?", "answer": "3+4=<<3+4=7>>7\n#### 7"},
    {"question": "A box holds 6 eggs. How many in 2?", "answer": "6*2=<<6*2=12>>12\n#### 12"},
]


def fake_datasets(monkeypatch, rows=ROWS, fail=None):
    calls = []

    def load_dataset(name, config, split):
        calls.append((name, config, split))
        if fail is not None:
            raise fail
        return list(rows)

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    return calls


def test_hf_problems_are_downloaded_once_and_debated_like_test_jsonl(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    calls = fake_datasets(monkeypatch)
    sols = load_gsm8k("hf:")
    assert calls == [("openai/gsm8k", "main", "test")]
    assert [(s.index, s.model, s.is_correct) for s in sols] == [
        (0, "reference", True), (0, "planted-slip", False),
        (1, "reference", True), (1, "planted-slip", False),
    ]  # fmt: skip
    assert sols[1].transcript is not None and sols[1].transcript.answer == "8"
    assert load_gsm8k("hf:", limit=1)[0].question == ROWS[0]["question"]
    assert len(calls) == 1  # the second read came from the cache
    cached = tmp_path / "gsm8k" / "openai--gsm8k-main-test.jsonl"
    assert cached.is_file() and hf_problems("hf:openai/gsm8k") == cached


def test_a_named_split_has_a_file_of_its_own(tmp_path, monkeypatch):
    calls = fake_datasets(monkeypatch)
    first = hf_problems("hf:openai/gsm8k:main:train", cache=tmp_path)
    assert calls == [("openai/gsm8k", "main", "train")]
    assert first.name == "openai--gsm8k-main-train.jsonl"


def test_hf_failures_are_data_errors_that_name_the_cause(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setitem(sys.modules, "datasets", None)  # not installed
    with pytest.raises(DataError, match="pip install datasets"):
        load_gsm8k("hf:")
    fake_datasets(monkeypatch, fail=ConnectionError("no route to huggingface.co"))
    with pytest.raises(DataError, match=r"no route to huggingface\.co"):
        load_gsm8k("hf:")
    fake_datasets(monkeypatch, rows=[{"question": "q?", "answer": 7}])
    with pytest.raises(DataError, match="row 1: no 'question' and 'answer' strings"):
        load_gsm8k("hf:")
    fake_datasets(monkeypatch, rows=[])
    with pytest.raises(DataError, match="no rows"):
        load_gsm8k("hf:")
    assert not (tmp_path / "gsm8k").exists() or not any((tmp_path / "gsm8k").iterdir())


@pytest.mark.parametrize("spec", ["hf:a:b:c:d", "hf:../etc", "hf:-x", "hf:a b", "hf::main"])
def test_malformed_hf_specs_are_refused_before_any_download(spec, tmp_path, monkeypatch):
    calls = fake_datasets(monkeypatch)
    with pytest.raises(DataError, match="hf:"):
        hf_problems(spec, cache=tmp_path)
    assert calls == []


def test_a_downloaded_answer_that_does_not_parse_is_refused_naming_the_line(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    fake_datasets(monkeypatch, rows=[{"question": "q?", "answer": "no final line"}])
    with pytest.raises(DataError, match="line 1: the answer must end with a line '#### <number>'"):
        load_gsm8k("hf:")


def test_a_cache_that_cannot_be_made_is_refused_with_the_reason(tmp_path, monkeypatch):
    fake_datasets(monkeypatch)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(DataError, match="cannot keep the download"):
        hf_problems("hf:", cache=blocker)
