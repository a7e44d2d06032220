"""The command line's two consoles show text as it was sent."""

from __future__ import annotations

from proofgames.cli._common import console, err_console


def test_emoji_codes_are_shown_verbatim_not_replaced() -> None:
    """A party's or a model's ``:smile:`` is its text, not an emoji the console chose."""
    for shown_on in (console, err_console):
        with shown_on.capture() as captured:
            shown_on.print("A said :smile: and :thumbs_up:")
        assert captured.get() == "A said :smile: and :thumbs_up:\n"
