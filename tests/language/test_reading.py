"""QuALITY- and GPQA-style loaders and quote verification, on fixtures the tests write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proofgames.language.gsm8k import DataError
from proofgames.language.reading import check_quotes, load_gpqa, load_quality, load_reading

ARTICLE = "The lighthouse keeper counted ships.\nNone came in the storm of 1911."


def jsonl(path: Path, *rows: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def quality_row(**question: object) -> dict[str, object]:
    q = {"question": "What did the keeper count?", "options": ["gulls", "ships", "waves"],
         "gold_label": 2} | question  # fmt: skip
    return {"article_id": "a1", "title": "Light", "article": ARTICLE, "questions": [q]}


def test_a_quality_file_gives_each_question_with_its_article(tmp_path):
    items = load_quality(jsonl(tmp_path / "q.jsonl", quality_row(), quality_row()))
    assert [i.index for i in items] == [0, 1]
    assert items[0].source == ARTICLE and items[0].options[items[0].answer] == "ships"


def test_a_gpqa_file_puts_the_correct_answer_first(tmp_path):
    row = {"Question": "Which is a noble gas?", "Correct Answer": "argon",
           "Incorrect Answer 1": "nitrogen", "Incorrect Answer 2": "oxygen",
           "Incorrect Answer 3": "sodium", "Subdomain": "chemistry"}  # fmt: skip
    (item,) = load_gpqa(jsonl(tmp_path / "g.jsonl", row))
    assert item.options == ("argon", "nitrogen", "oxygen", "sodium") and item.answer == 0
    with pytest.raises(DataError, match="two options are the same"):
        load_gpqa(jsonl(tmp_path / "d.jsonl", row | {"Incorrect Answer 3": "argon"}))


def test_a_reading_file_is_told_apart_by_its_first_record(tmp_path):
    gpqa = {"Question": "Which is a noble gas?", "Correct Answer": "argon",
            "Incorrect Answer 1": "nitrogen", "Incorrect Answer 2": "oxygen",
            "Incorrect Answer 3": "sodium"}  # fmt: skip
    style, items = load_reading(jsonl(tmp_path / "g.jsonl", gpqa, gpqa))
    assert style == "gpqa" and len(items) == 2 and items[0].source == ""
    style, items = load_reading(jsonl(tmp_path / "q.jsonl", quality_row()))
    assert style == "quality" and items[0].source == ARTICLE
    with pytest.raises(DataError, match="line 2: the field 'article' is missing"):
        load_reading(jsonl(tmp_path / "m.jsonl", quality_row(), gpqa))  # one style a file
    with pytest.raises(DataError, match="line 1: neither a QuALITY-style record"):
        load_reading(jsonl(tmp_path / "n.jsonl", {"title": "x"}))


@pytest.mark.parametrize(
    "question, words",
    [
        ({"gold_label": 4}, "names no option"),
        ({"gold_label": True}, "must be an int"),
        ({"options": ["only one"]}, "at least 2 strings"),
        ({"question": ""}, "non-empty string"),
    ],
)
def test_a_malformed_quality_question_is_refused_naming_its_line(tmp_path, question, words):
    path = jsonl(tmp_path / "q.jsonl", quality_row(), quality_row(**question))
    with pytest.raises(DataError, match=words) as caught:
        load_quality(path)
    assert "line 2, question 1" in str(caught.value)


def test_empty_and_binary_files_are_refused(tmp_path):
    (tmp_path / "e.jsonl").write_text("")
    with pytest.raises(DataError, match="no records"):
        load_quality(tmp_path / "e.jsonl")
    (tmp_path / "b.jsonl").write_bytes(b"\x00\x01")
    with pytest.raises(DataError, match="binary"):
        load_gpqa(tmp_path / "b.jsonl")


def test_quotes_are_verified_against_the_source_up_to_white_space():
    text = ("<quote>counted ships. None came</quote> and <quote>counted  boats</quote> "
            "and <quote>  </quote>")  # fmt: skip
    marked, quotes = check_quotes(ARTICLE, text)
    assert [q.verified for q in quotes] == [True, False, False]  # spans a line break
    assert marked.count("<v_quote>") == 1 and marked.count("<u_quote>") == 2
    assert "<quote>" not in marked
