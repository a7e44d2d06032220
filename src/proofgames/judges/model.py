"""A model judge: any Inspect AI model answers "does this step follow?".

**One word** (the default).  The judge is asked for one word, yes or no, with
log-probabilities, and reads the first token's top log-probabilities: the *yes/no mass*
is the probability of the tokens that read ``yes`` or ``no`` (any case, spaces and
punctuation stripped), and ``P[yes] = P(yes) / (P(yes) + P(no))`` -- so Figure 1's
stochastic protocol applies to it.  A provider that gives no log-probabilities yields 1.0
or 0.0 from the reply's first word.

**Reason, then answer** (``reason_then_answer``).  The model may write its reasoning,
within the cap on output tokens, and must end with a line ``Answer: yes`` or
``Answer: no``; the last such line is the answer.  P[yes] is read from the
log-probabilities of the answer word's token when the provider gives them (the same
mass rule), and otherwise from the text (1.0 or 0.0).

**The judge fails honestly** (:class:`~.judges.JudgeFailed`, an
:class:`~proofgames.errors.OracleError`: the run stops as ``"judge"``, no party forfeits
and nothing is scored) when

* the yes/no mass read from log-probabilities is below ``min_mass`` (default 0.5): the
  model said something else (a newline, "The", "Maybe"), and renormalizing a sliver of
  probability would invent a verdict;
* the reply is neither yes nor no (or, reasoning, never reaches an answer line; the
  reason says when the cap on output tokens was hit);
* the model API fails: a raise from ``generate`` (after Inspect's own retries), an output
  carrying an error, a filtered output, an Inspect limit (``LimitExceededError``), a
  model role that is not bound, or usage that is not a count or money that is not a
  finite non-negative number.

The prompt is a template (:data:`DEFAULT_PROMPT_TEMPLATE`) with fields ``{task}``,
``{premises}``, ``{step}``, ``{question}`` and ``{instruction}`` (the answer format: one
word, or reason then answer; appended on a new line when the template omits it).  Input
tokens are what a person would read (:func:`~.transcript.question_tokens`); the model's
own count, output tokens and money come from the provider's usage report.  Inspect's
cache answers repeated questions (``cache=True``).

Options come in a :class:`ModelJudgeConfig`.  A judge built without one (as
:func:`~.experiments.make_judge` builds ``model[:NAME]``) takes the one set by
:func:`use_judge_config` (the command line sets it from ``--judge-*`` options).

Example:
    >>> from inspect_ai.model import ModelOutput, ModelUsage
    >>> out = ModelOutput.from_content("m", "no")
    >>> read_answer(out, ModelJudgeConfig())
    Reading(p_yes=0.0, source='text', mass=None)
    >>> out = ModelOutput.from_content("m", "It adds 3 and 4. Answer: **Yes**")
    >>> read_answer(out, ModelJudgeConfig(reason_then_answer=True)).p_yes
    1.0
    >>> ModelJudgeConfig(min_mass=0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.errors.ProtocolError: the model judge's min_mass must be a number in (0, 1], not 0
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from inspect_ai.model import GenerateConfig, Logprob, Model, ModelOutput, get_model

from ..errors import ProtocolError
from .interface import JudgeFailed, JudgeKind, Judgement, StepQuestion
from .text import question_tokens

TOP_LOGPROBS = 20
DEFAULT_MIN_MASS = 0.5
"""The least yes/no probability mass a log-probability reading needs."""
ONE_WORD_TOKENS = 1
"""Output tokens of a one-word judge (the default cap)."""
REASONING_TOKENS = 1024
"""The default cap on output tokens when the judge reasons before answering."""
MAX_OUTPUT_TOKENS = 100_000
"""The largest cap on output tokens accepted."""
MAX_PROMPT_CHARS = 20_000
"""The longest prompt template accepted (characters)."""
KEPT_CHARS = 1_000
"""Characters of the model's reply kept in a judgement's detail."""

ONE_WORD = "Answer with one word: yes or no."
REASON_THEN_ANSWER = (
    "Reason step by step first. Then end with one last line, exactly 'Answer: yes' or 'Answer: no'."
)
DEFAULT_PROMPT_TEMPLATE = (
    "You check one step of an argument.\n"
    "Task (the part this step uses): {task}\n"
    "Earlier steps it relies on:\n{premises}\n"
    "Step to check: {step}\n"
    "{question} {instruction}"
)
"""The judge's prompt: only what the question holds, then the answer format."""
PROMPT_FIELDS = ("task", "premises", "step", "question", "instruction")

_ANSWER_LINE = re.compile(r"\banswer\b\W{0,8}(yes|no)\b", re.IGNORECASE)
_PUNCT = " \t\r\n.!,:;*_\"'`()[]"


def check_min_mass(value: object, name: str = "the model judge's min_mass") -> float:
    """``value`` as a float in (0, 1].

    Raises:
        ProtocolError: naming ``name`` and the value.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ProtocolError(f"{name} must be a number in (0, 1], not {value!r}")
    return float(value)


def check_max_tokens(value: object, name: str = "the model judge's max_tokens") -> int:
    """``value`` as an int in [1, :data:`MAX_OUTPUT_TOKENS`].

    Raises:
        ProtocolError: naming ``name`` and the value.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_OUTPUT_TOKENS:
        raise ProtocolError(f"{name} must be an int in [1, {MAX_OUTPUT_TOKENS:,}], not {value!r}")
    return value


def check_prompt(value: object, name: str = "the model judge's prompt") -> str:
    """``value`` as a prompt template (see the module doc).

    It must be text of at most :data:`MAX_PROMPT_CHARS` characters, hold ``{step}``, and
    use only the fields in :data:`PROMPT_FIELDS`, plain (no ``!r``, ``:>10`` or
    ``.attribute``); ``{{`` and ``}}`` are literal braces.

    Raises:
        ProtocolError: naming ``name`` and what is wrong.
    """
    if not isinstance(value, str):
        raise ProtocolError(f"{name} must be text, not {type(value).__name__}")
    if len(value) > MAX_PROMPT_CHARS:
        raise ProtocolError(f"{name} has {len(value):,} characters, more than {MAX_PROMPT_CHARS:,}")
    try:
        parts = list(string.Formatter().parse(value))
    except ValueError as exc:
        raise ProtocolError(f"{name} is not a template: {exc} (write {{{{ for a brace)") from None
    fields = set()
    for _, field_name, spec, conversion in parts:
        if field_name is None:
            continue
        if field_name not in PROMPT_FIELDS or spec or conversion:
            shown = "{" + field_name + (f"!{conversion}" if conversion else "")
            shown += (f":{spec}" if spec else "") + "}"
            raise ProtocolError(
                f"{name} uses {shown}; the fields are "
                + ", ".join(f"{{{f}}}" for f in PROMPT_FIELDS)
                + " (plain)"
            )
        fields.add(field_name)
    if "step" not in fields:
        raise ProtocolError(f"{name} must hold {{step}}, the step to check")
    return value


@dataclass(frozen=True)
class ModelJudgeConfig:
    """How a model judge is asked and read (see the module doc).

    Args:
        min_mass: The least yes/no probability mass, in (0, 1], a log-probability
            reading needs; below it the judge failed.
        max_tokens: The cap on output tokens; ``None``: 1 for a one-word answer,
            :data:`REASONING_TOKENS` when reasoning.
        reason_then_answer: Let the model reason, then read its last ``Answer:`` line.
        prompt: The prompt template (:func:`check_prompt`).
        logprobs: Ask for log-probabilities (turn off for a provider that refuses them;
            P[yes] then comes from the text).

    Raises:
        ProtocolError: An option out of range, naming it and the value.
    """

    min_mass: float = DEFAULT_MIN_MASS
    max_tokens: int | None = None
    reason_then_answer: bool = False
    prompt: str = DEFAULT_PROMPT_TEMPLATE
    logprobs: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_mass", check_min_mass(self.min_mass))
        if self.max_tokens is not None:
            check_max_tokens(self.max_tokens)
        check_prompt(self.prompt)
        for name in ("reason_then_answer", "logprobs"):
            if not isinstance(getattr(self, name), bool):
                raise ProtocolError(
                    f"the model judge's {name} must be True or False, not {getattr(self, name)!r}"
                )

    @property
    def output_tokens(self) -> int:
        """The cap on output tokens in force."""
        if self.max_tokens is not None:
            return self.max_tokens
        return REASONING_TOKENS if self.reason_then_answer else ONE_WORD_TOKENS

    @property
    def instruction(self) -> str:
        """The answer format asked for."""
        return REASON_THEN_ANSWER if self.reason_then_answer else ONE_WORD

    def to_dict(self) -> dict[str, object]:
        """Plain data (the prompt only when it is not the default)."""
        out: dict[str, object] = {
            "min_mass": self.min_mass, "max_tokens": self.output_tokens,
            "reason_then_answer": self.reason_then_answer, "logprobs": self.logprobs,
        }  # fmt: skip
        if self.prompt != DEFAULT_PROMPT_TEMPLATE:
            out["prompt"] = self.prompt
        return out


_CONFIG: ContextVar[ModelJudgeConfig | None] = ContextVar("model_judge_config", default=None)


@contextmanager
def use_judge_config(config: ModelJudgeConfig) -> Iterator[ModelJudgeConfig]:
    """Model judges built without a config, in the block and its tasks, use ``config``.

    Example:
        >>> with use_judge_config(ModelJudgeConfig(min_mass=0.8)):
        ...     ModelJudge("mockllm/model").config.min_mass
        0.8
        >>> ModelJudge("mockllm/model").config.min_mass
        0.5
    """
    if not isinstance(config, ModelJudgeConfig):
        raise ProtocolError(f"a judge config must be a ModelJudgeConfig, not {config!r}")
    token = _CONFIG.set(config)
    try:
        yield config
    finally:
        _CONFIG.reset(token)


def render_question(question: StepQuestion, config: ModelJudgeConfig | None = None) -> str:
    """The judge's prompt: the template filled with only what the question holds."""
    config = config or ModelJudgeConfig()
    template = config.prompt
    if "{instruction}" not in template.replace("{{", ""):
        template += "\n{instruction}"
    return template.format(
        task=question.task or "(none)",
        premises="\n".join(f"- {p}" for p in question.premises) or "- (none)",
        step=question.step,
        question=question.prompt,
        instruction=config.instruction,
    )


def _word(token: str) -> str:
    return token.strip(_PUNCT).lower()


class Reading(NamedTuple):
    """P[yes] read from a reply, where it came from, and the yes/no mass (logprobs only)."""

    p_yes: float
    source: str
    mass: float | None


def _from_logprobs(
    token: str, logprob: float, tops: list[tuple[str, float]], min_mass: float, where: str
) -> Reading:
    mass = {"yes": 0.0, "no": 0.0}
    for tok, lp in tops or [(token, logprob)]:
        word = _word(tok)
        if word in mass and math.isfinite(lp):
            mass[word] += math.exp(min(lp, 0.0))
    total = mass["yes"] + mass["no"]
    if not total >= min_mass:
        raise JudgeFailed(
            f"the model judge's yes/no probability mass at {where} ({token[:20]!r}) is "
            f"{total:.3g}, below the threshold {min_mass:g}: it answered neither yes nor no"
        )
    return Reading(min(1.0, mass["yes"] / total), "logprobs", min(1.0, total))


def _tops(entry: Logprob) -> list[tuple[str, float]]:
    return [(t.token, float(t.logprob)) for t in entry.top_logprobs or []]


def read_answer(output: ModelOutput, config: ModelJudgeConfig) -> Reading:
    """P[yes] from a reply (see the module doc for the rules).

    Raises:
        JudgeFailed: The yes/no mass is below ``config.min_mass``, or the reply gives no
            yes or no.
    """
    choice = output.choices[0] if output.choices else None
    if choice is not None and choice.stop_reason == "content_filter":
        raise JudgeFailed("the model judge's reply was withheld by the provider's content filter")
    content = choice.logprobs.content if choice and choice.logprobs and config.logprobs else []
    text = output.completion or ""
    if config.reason_then_answer:
        return _read_reasoned(output, config, content, text)
    if content:
        first = content[0]
        return _from_logprobs(
            first.token, first.logprob, _tops(first), config.min_mass, "the first token"
        )
    words = text.split()
    word = _word(words[0]) if words else ""
    if word in ("yes", "no"):
        return Reading(1.0 if word == "yes" else 0.0, "text", None)
    raise JudgeFailed(f"the model judge answered {text[:80]!r}, not yes or no")


def _read_reasoned(
    output: ModelOutput, config: ModelJudgeConfig, content: list[Logprob], text: str
) -> Reading:
    if content:  # the answer word's own log-probabilities, found in the tokens' text
        tokens = [c.token for c in content]
        joined = "".join(tokens)
        found = list(_ANSWER_LINE.finditer(joined))
        if found:
            at, start = found[-1].start(1), 0
            for i, (tok, entry) in enumerate(zip(tokens, content, strict=True)):
                if start <= at < start + len(tok):
                    return _from_logprobs(
                        tok, entry.logprob, _tops(entry), config.min_mass, f"answer token {i}"
                    )
                start += len(tok)
    matches = list(_ANSWER_LINE.finditer(text))
    if matches:
        return Reading(1.0 if matches[-1].group(1).lower() == "yes" else 0.0, "text", None)
    choice = output.choices[0] if output.choices else None
    if choice is not None and choice.stop_reason in ("max_tokens", "model_length"):
        raise JudgeFailed(
            f"the model judge used its {config.output_tokens:,} output tokens without "
            "writing 'Answer: yes' or 'Answer: no'"
        )
    tail = text[-80:]
    raise JudgeFailed(
        f"the model judge's reply ends {tail!r}, with no 'Answer: yes' or 'Answer: no'"
    )


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise JudgeFailed(f"the judge model reported {what} {value!r}, not a count")
    return value


def _money(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise JudgeFailed(f"the judge model reported a cost of {value!r}, not money")
    if not math.isfinite(value) or value < 0:
        raise JudgeFailed(f"the judge model reported a cost of {value!r}, not money")
    return float(value)


class ModelJudge:
    """A judge backed by an Inspect model.

    Args:
        model: A model name (``openai/gpt-4o``, ``mockllm/model``, ...) or a Model;
            ``None``: the model bound to role ``role`` in the running Inspect eval (an
            unbound role is the judge's failure, never the eval's own model).
        role: The model role (``judge``).
        cache: Use Inspect's cache.
        config: How the model is asked and read; ``None``: the one set by
            :func:`use_judge_config`, else the defaults.
    """

    kind: JudgeKind = "model"

    def __init__(
        self, model: str | Model | None = None, role: str = "judge", cache: bool = True,
        config: ModelJudgeConfig | None = None,
    ) -> None:  # fmt: skip
        if config is None:
            config = _CONFIG.get() or ModelJudgeConfig()
        if not isinstance(config, ModelJudgeConfig):
            raise ProtocolError(f"a judge config must be a ModelJudgeConfig, not {config!r}")
        self._model, self.role, self.cache, self.config = model, role, cache, config
        self.name = str(model) if model is not None else f"role:{role}"

    def model(self) -> Model:
        """The Inspect model (resolved at call time, inside an eval for roles)."""
        if isinstance(self._model, Model):
            return self._model
        if self._model is not None:
            return get_model(self._model)
        return get_model(role=self.role, required=True)

    async def judge(self, question: StepQuestion) -> Judgement:
        """Ask the model once; P[yes] from log-probabilities where given.

        Raises:
            JudgeFailed: See the module doc; never a verdict.
        """
        try:
            model = self.model()
        except Exception as exc:
            raise JudgeFailed(
                f"the model judge {self.name!r} has no model: {exc} (bind it: "
                f"--model-role {self.role}=PROVIDER/MODEL, or name it: model:NAME)"
            ) from None
        c = self.config
        gen = GenerateConfig(max_tokens=c.output_tokens, temperature=0.0)
        if c.logprobs:
            gen = gen.merge(GenerateConfig(logprobs=True, top_logprobs=TOP_LOGPROBS))
        try:
            output = await model.generate(
                render_question(question, c), config=gen, cache=self.cache
            )
        except Exception as exc:  # the API, Inspect's limits: the run's error, no one's forfeit
            raise JudgeFailed(f"the judge model {str(model)!r} failed: {exc!r}") from exc
        if output.error:
            raise JudgeFailed(f"the judge model {str(model)!r} failed: {output.error}")
        reading = read_answer(output, c)
        usage = output.usage
        kept = output.completion[-KEPT_CHARS:] if c.reason_then_answer else output.completion
        return Judgement(
            p_yes=min(1.0, max(0.0, reading.p_yes)),
            input_tokens=question_tokens(question),
            output_tokens=_count(usage.output_tokens, "output tokens") if usage else 0,
            cost_usd=_money(usage.total_cost) if usage else None,
            detail={
                "model": str(model),
                "source": reading.source,
                "yes_no_mass": reading.mass,
                "answer": kept[:KEPT_CHARS],
                "model_input_tokens": _count(usage.input_tokens, "input tokens") if usage else None,
                "reason_then_answer": c.reason_then_answer,
                "max_tokens": c.output_tokens,
            },
        )


def load_prompt(path: str | Path) -> str:
    """A prompt template from a UTF-8 text file, checked (:func:`check_prompt`).

    Raises:
        ProtocolError: The file is missing, too large, not UTF-8 text, or not a template;
            the message names the path.
    """
    path = Path(path)
    name = f"the judge prompt {str(path)!r}"
    try:
        if not path.is_file():
            raise ProtocolError(f"{name} is not a file")
        if path.stat().st_size > 4 * MAX_PROMPT_CHARS:
            raise ProtocolError(f"{name} is larger than {4 * MAX_PROMPT_CHARS:,} bytes")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(f"{name} is not UTF-8 text") from None
    except OSError as exc:
        raise ProtocolError(f"{name} cannot be read: {exc.strerror or exc}") from None
    if "\x00" in text:
        raise ProtocolError(f"{name} is not text (it holds NUL characters)")
    return check_prompt(text, name)
