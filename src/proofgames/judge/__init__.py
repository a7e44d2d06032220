"""The judge server: people answer the verifier's single-step questions.

``proofgames judge serve`` starts a web app (FastAPI, server-rendered pages with htmx)
where admins create studies and invite raters, and raters answer one step at a time.
:class:`proofgames.judges.human.HumanJudge` is the verifier's side: a
:class:`proofgames.judges.StepJudge` that posts a question to the server and waits for
k raters' answers. See ``docs/judge.md``.

The server's modules need the ``judge`` extra (``pip install 'proofgames[judge]'``);
importing this package alone does not.
"""
