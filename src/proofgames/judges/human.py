"""``HumanJudge``: a :class:`~proofgames.judges.StepJudge` answered by people.

It posts the verifier's question to the judge server (``POST /api/v1/questions``) and
waits, by long polling, until k raters have answered; P[yes] is the fraction of them
who said yes, and every answer counts as one human judgement.

It survives a restart of either side:

* the server: connection errors and 5xx answers are retried until the deadline, and
  the question and its answers are in the server's database, so a restarted server
  answers the next poll;
* the verifier: a question is keyed by (study, debate id, question id), so a restarted
  debate that asks the same question again finds the one it posted (and any answers
  given meanwhile) instead of posting a second.

Example (``transport`` lets a test call an app in-process):
    >>> judge = HumanJudge("http://127.0.0.1:8000", token="t", study="demo",
    ...                    debate_id="debate-1", timeout_s=60)
    >>> judge.kind, judge.name
    ('human', 'human:demo')
    >>> from proofgames.judges import StepJudge
    >>> isinstance(judge, StepJudge)
    True
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from ..errors import OracleError
from .interface import JudgeKind, Judgement, StepQuestion


class JudgeTimeout(OracleError):
    """No k answers arrived before the judge's deadline."""


class HumanJudge:
    """Step judgements from k raters of a judge-server study.

    Args:
        url: The judge server's base URL.
        token: An admin's API token (``proofgames judge token`` or the admin page).
        study: The study's name; its raters answer.
        debate_id: The debate this judge serves (with the question id, the key that
            makes re-posting after a restart idempotent).
        k: Answers per question (default: the study's k).
        timeout_s: The longest :meth:`judge` waits in all; then :class:`JudgeTimeout`.
        poll_s: How long one long-poll request waits on the server.
        retry_s: Pause before retrying after a connection error or a 5xx answer.
        transport: An httpx transport (tests: ``httpx.ASGITransport(app)``).
    """

    kind: JudgeKind = "human"

    def __init__(
        self,
        url: str,
        token: str,
        study: str,
        debate_id: str,
        *,
        k: int | None = None,
        timeout_s: float = 24 * 3600.0,
        poll_s: float = 20.0,
        retry_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if timeout_s <= 0 or poll_s <= 0 or retry_s < 0:
            raise OracleError("HumanJudge needs timeout_s > 0, poll_s > 0 and retry_s >= 0")
        self.url, self.study, self.debate_id, self.k = url.rstrip("/"), study, debate_id, k
        self.name = f"human:{study}"
        self._headers = {"authorization": f"Bearer {token}"}
        self.timeout_s, self.poll_s, self.retry_s = timeout_s, poll_s, retry_s
        self._transport = transport

    async def _call(
        self, client: httpx.AsyncClient, method: str, path: str, deadline: float, **kw: Any
    ) -> dict[str, Any]:
        """One API call, retried through connection errors and 5xx until ``deadline``."""
        while True:
            try:
                response = await client.request(method, path, **kw)
            except httpx.TransportError as exc:
                problem = f"cannot reach the judge server at {self.url}: {exc!r}"
            else:
                if response.status_code < 400:
                    data: dict[str, Any] = response.json()
                    return data
                if response.status_code < 500:
                    raise OracleError(
                        f"the judge server refused {method} {path} "
                        f"({response.status_code}): {response.text[:500]}"
                    )
                problem = f"the judge server failed ({response.status_code})"
            if time.monotonic() + self.retry_s >= deadline:
                raise JudgeTimeout(f"no answer within {self.timeout_s:g} s; last: {problem}")
            await asyncio.sleep(self.retry_s)

    async def judge(self, question: StepQuestion) -> Judgement:
        """Post ``question`` (idempotently) and wait for its k answers.

        Raises:
            JudgeTimeout: Not answered within ``timeout_s``.
            OracleError: The server refused the request (bad token, unknown study).
        """
        deadline = time.monotonic() + self.timeout_s
        body: dict[str, Any] = {
            "study": self.study,
            "debate_id": self.debate_id,
            "question": question.to_dict(),
        }
        if self.k is not None:
            body["k"] = self.k
        async with httpx.AsyncClient(
            base_url=self.url,
            headers=self._headers,
            transport=self._transport,
            timeout=httpx.Timeout(self.poll_s + 10.0, connect=5.0),
        ) as client:
            result = await self._call(client, "POST", "/api/v1/questions", deadline, json=body)
            while not result["closed"]:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise JudgeTimeout(
                        f"question {question.question_id[:12]} of debate {self.debate_id!r} "
                        f"has {result['n_answers']}/{result['k']} answers after "
                        f"{self.timeout_s:g} s"
                    )
                params = {
                    "study": self.study,
                    "debate_id": self.debate_id,
                    "question_id": question.question_id,
                    "wait": min(self.poll_s, left),
                }
                result = await self._call(
                    client, "GET", "/api/v1/questions", deadline, params=params
                )
        return self._judgement(result)

    def _judgement(self, result: dict[str, Any]) -> Judgement:
        answers = result["answers"]
        n = len(answers)
        if n == 0:
            raise OracleError("the judge server closed a question with no answers")
        yes = sum(1 for a in answers if a["yes"])
        return Judgement(
            p_yes=yes / n,
            calls=n,
            human_judgements=n,
            detail={
                "study": self.study,
                "debate_id": self.debate_id,
                "question_id": result["question_id"],
                "k": result["k"],
                "answers": answers,
            },
        )
