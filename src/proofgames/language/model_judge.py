"""A model judge: any Inspect AI model answers "does this step follow?".

The judge is asked for one word, yes or no, with log-probabilities.  P[yes] is read from
the first token's top log-probabilities, ``P(yes) / (P(yes) + P(no))`` over the tokens
that read ``yes`` or ``no`` (any case, spaces stripped), so Figure 1's stochastic protocol
applies to it; a provider that gives no log-probabilities yields 1.0 or 0.0 from the text.
An answer that is neither is the judge's failure (:class:`~proofgames.OracleError`): the
run stops and says so.  Input tokens are what a person would read
(:func:`~.transcript.question_tokens`); the model's own count, output tokens and money
come from the provider's usage report.
Inspect's cache answers repeated questions (``cache=True``).

Example:
    >>> from inspect_ai.model import ModelOutput, ModelUsage
    >>> out = ModelOutput.from_content("m", "no")
    >>> out.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
    >>> p_yes_from_output(out)
    (0.0, 'text')
"""

from __future__ import annotations

import math

from inspect_ai.model import GenerateConfig, Model, ModelOutput, get_model

from ..errors import OracleError
from ..judging import JudgeKind, Judgement, StepQuestion
from .transcript import question_tokens

TOP_LOGPROBS = 20


def render_question(question: StepQuestion) -> str:
    """The judge's prompt: only what the question holds."""
    premises = "\n".join(f"- {p}" for p in question.premises) or "- (none)"
    return (
        "You check one step of an argument.\n"
        f"Task (the part this step uses): {question.task or '(none)'}\n"
        f"Earlier steps it relies on:\n{premises}\n"
        f"Step to check: {question.step}\n"
        f"{question.prompt} Answer with one word: yes or no."
    )


def _word(token: str) -> str:
    return token.strip().strip(".!,:").lower()


def p_yes_from_output(output: ModelOutput) -> tuple[float, str]:
    """``(P[yes], source)`` from a reply: ``"logprobs"`` or ``"text"``.

    Raises:
        OracleError: No yes/no in the log-probabilities and the text is neither.
    """
    choice = output.choices[0] if output.choices else None
    if choice is not None and choice.logprobs is not None and choice.logprobs.content:
        first = choice.logprobs.content[0]
        tops = first.top_logprobs or []
        mass = {"yes": 0.0, "no": 0.0}
        pairs = [(t.token, t.logprob) for t in tops] or [(first.token, first.logprob)]
        for token, logprob in pairs:
            word = _word(token)
            if word in mass:
                mass[word] += math.exp(logprob)
        total = mass["yes"] + mass["no"]
        if total > 0:
            return mass["yes"] / total, "logprobs"
    word = _word(output.completion.split()[0]) if output.completion.split() else ""
    if word in ("yes", "no"):
        return (1.0 if word == "yes" else 0.0), "text"
    raise OracleError(f"the model judge answered {output.completion[:80]!r}, not yes or no")


class ModelJudge:
    """A judge backed by an Inspect model.

    Args:
        model: A model name (``openai/gpt-4o``, ``mockllm/model``, ...) or a Model;
            ``None``: the model in role ``role`` of the running Inspect eval.
        role: The model role (``judge``).
        cache: Use Inspect's cache.
        max_tokens: Tokens the judge may write.
    """

    kind: JudgeKind = "model"

    def __init__(
        self, model: str | Model | None = None, role: str = "judge", cache: bool = True,
        max_tokens: int = 1,
    ) -> None:  # fmt: skip
        self._model, self.role, self.cache, self.max_tokens = model, role, cache, max_tokens
        self.name = str(model) if model is not None else f"role:{role}"

    def model(self) -> Model:
        """The Inspect model (resolved at call time, inside an eval for roles)."""
        if isinstance(self._model, Model):
            return self._model
        return get_model(self._model, role=self.role if self._model is None else None)

    async def judge(self, question: StepQuestion) -> Judgement:
        """Ask the model once; P[yes] from log-probabilities where given."""
        model = self.model()
        config = GenerateConfig(
            max_tokens=self.max_tokens, temperature=0.0, logprobs=True, top_logprobs=TOP_LOGPROBS
        )
        output = await model.generate(render_question(question), config=config, cache=self.cache)
        if output.error:
            raise OracleError(f"the model judge failed: {output.error}")
        p, source = p_yes_from_output(output)
        usage = output.usage
        return Judgement(
            p_yes=min(1.0, max(0.0, p)),
            input_tokens=question_tokens(question),
            output_tokens=usage.output_tokens if usage else 0,
            cost_usd=usage.total_cost if usage else None,
            detail={
                "model": str(model),
                "source": source,
                "answer": output.completion[:200],
                "model_input_tokens": usage.input_tokens if usage else None,
            },
        )
