"""The Binary Erasure Channel task (Anil et al. 2021, Definition 5 and Appendix E.1).

The instance is a bit ``x`` drawn uniformly; its label is ``x`` itself.  The prover reads
``x`` and sends one of ``K`` tokens to the verifier, who sees nothing but that token.  The
channel forbids token 1 when ``x = 0`` and token 0 when ``x = 1``; tokens ``2 .. K-1`` are
*erasures*, allowed for both inputs and so carrying no evidence.  The honest protocol is
"send 1 exactly when ``x = 1``; accept exactly token 1".

Besides the :class:`~proofgames.pvg.task.PVGTask` interface the task offers the closed-form
verifier best response to a prover (Appendix C), used by prover-first play, and a message
statistic (the fraction of erasure tokens) for the training log.

Example:
    >>> import torch
    >>> task = BinaryErasureChannel()
    >>> x, y = task.sample(4, torch.Generator().manual_seed(0))
    >>> bool(torch.equal(x, y)), task.allowed(torch.tensor([0.0, 1.0]))[:, :3].tolist()
    (True, [[True, False, True], [False, True, True]])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..task import ProverOutput, PVGTask, check_arguments, layer_norm_mlp, one_hot_message

ERASURE_START = 2  # tokens 0 and 1 are the informative ones


class BECProver(nn.Module):
    """The BEC prover: an MLP from the one-hot input bit to logits over the allowed tokens.

    Two hidden layers (LayerNorm then LeakyReLU).  In training mode the message is a
    straight-through Gumbel-softmax sample (a one-hot vector whose gradient is that of the
    relaxed sample); in evaluation mode it is the one-hot of the most likely token.

    Args:
        tokens: number of channel tokens ``K``.
        hidden: width of the hidden layers.
        temperature: Gumbel-softmax temperature.
    """

    def __init__(self, tokens: int = 16, hidden: int = 100, temperature: float = 1.0) -> None:
        super().__init__()
        self.tokens = tokens
        self.temperature = temperature
        self.net = layer_norm_mlp(2, hidden, tokens, hidden_layers=2)

    def logits(self, x: Tensor) -> Tensor:
        """Token logits ``(n, K)`` with the forbidden token of each input set to ``-inf``."""
        raw: Tensor = self.net(F.one_hot(x.long(), 2).to(next(self.parameters()).dtype))
        return raw.masked_fill(~allowed_tokens(x, self.tokens), float("-inf"))

    def token_probs(self, x: Tensor) -> Tensor:
        """The prover's message distribution ``(n, K)`` for each input."""
        return torch.softmax(self.logits(x), dim=-1)

    def forward(self, x: Tensor, labels: Tensor | None = None) -> ProverOutput:
        """Send one token per input (``labels`` are unused: BEC has no auxiliary heads)."""
        logits = self.logits(x)
        message = one_hot_message(logits, self.temperature, sample=self.training)
        return ProverOutput(message=message, aux_loss=logits.new_zeros(()))


class BECVerifier(nn.Module):
    """The BEC verifier: one hidden layer (LayerNorm, LeakyReLU) from the token to a logit.

    It ignores the instance: its only evidence is the message.

    Args:
        tokens: number of channel tokens ``K``.
        hidden: width of the hidden layer.
    """

    def __init__(self, tokens: int = 16, hidden: int = 100) -> None:
        super().__init__()
        self.net = layer_norm_mlp(tokens, hidden, 1, hidden_layers=1)

    def forward(self, x: Tensor, message: Tensor) -> Tensor:
        """Logit of P[label 1] for each message, shape ``(n,)``."""
        out: Tensor = self.net(message)
        return out.squeeze(-1)


def allowed_tokens(x: Tensor, tokens: int) -> Tensor:
    """Boolean mask ``(n, K)``: which tokens the channel lets the prover send for each bit."""
    bits = x.long().reshape(-1, 1)
    mask = torch.ones(bits.shape[0], tokens, dtype=torch.bool, device=x.device)
    mask[:, 0:1] = bits == 0
    mask[:, 1:2] = bits == 1
    return mask


@dataclass(eq=False)
class BinaryErasureChannel(PVGTask):
    """The BEC task with ``K`` tokens (paper: 16) and the paper's agent architectures.

    Attributes:
        tokens: number of channel tokens ``K`` (at least 3: two informative, one erasure).
        hidden: width of the agents' hidden layers.
        temperature: the prover's Gumbel-softmax temperature.
    """

    name = "bec"
    tokens: int = 16
    hidden: int = 100
    temperature: float = 1.0

    def __post_init__(self) -> None:
        check_arguments(  # two informative tokens and an erasure, at least
            self.name,
            at_least={"tokens": (self.tokens, 3), "hidden": (self.hidden, 1)},
            positive={"temperature": self.temperature},
        )
        self.message_dim = self.tokens

    def sample(self, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """``n`` uniform bits ``x`` (float) and their labels (equal to ``x``)."""
        x = torch.randint(0, 2, (n,), generator=generator, device=generator.device).float()
        return x, x.clone()

    def make_prover(self) -> BECProver:
        """A fresh prover (2 hidden layers)."""
        return BECProver(self.tokens, self.hidden, self.temperature)

    def make_verifier(self) -> BECVerifier:
        """A fresh verifier (1 hidden layer)."""
        return BECVerifier(self.tokens, self.hidden)

    def allowed(self, x: Tensor) -> Tensor:
        """Boolean mask ``(n, K)`` of the tokens allowed for each input bit."""
        return allowed_tokens(x, self.tokens)

    def message_from_free(self, free: Tensor, x: Tensor) -> Tensor:
        """Softmax of ``free`` over the tokens allowed for ``x`` (forbidden ones get 0)."""
        return torch.softmax(free.masked_fill(~self.allowed(x), float("-inf")), dim=-1)

    def message_metrics(self, x: Tensor, message: Tensor) -> dict[str, float]:
        """Statistics of a batch of messages for the training log.

        ``erasure_fraction`` is the mean mass of the messages on erasure tokens;
        ``information_bits`` is the mutual information (in bits) between the input bit
        and the message token in the batch: 1 for any code that tells the bits apart, 0
        when both bits get the same token distribution (the prover-first collapse).
        """
        joint = torch.stack([message[x < 0.5].sum(0), message[x >= 0.5].sum(0)])
        joint = joint / joint.sum().clamp_min(1e-12)
        outer = joint.sum(1, keepdim=True) * joint.sum(0, keepdim=True)
        terms = joint * torch.log2(joint.clamp_min(1e-12) / outer.clamp_min(1e-12))
        return {
            "erasure_fraction": float(message[:, ERASURE_START:].sum(dim=-1).mean()),
            "information_bits": float(terms.sum()),
        }

    def best_response(self, prover: nn.Module, label_smoothing: float) -> Tensor:
        """The verifier's best response ``q`` (P[accept] per token, ``(K,)``) to a prover.

        For each token, ``q`` is the posterior P[label 1 | token] under the prover's
        current message distribution and uniform bits, pulled towards 1/2 by label
        smoothing ``s``: ``q = (1 - s) P[1 | token] + s / 2``.  This is the minimizer of
        the smoothed cross-entropy, and equals Appendix C's entropy-regularized response
        with coefficient ``s / (2 (1 - s))``.  The result is differentiable in the prover's
        parameters, so a leading prover can anticipate the response.
        """
        if not isinstance(prover, BECProver):
            raise TypeError(f"closed-form best response needs a BECProver, got {type(prover)}")
        device = next(prover.parameters()).device
        probs = prover.token_probs(torch.tensor([0.0, 1.0], device=device))  # (2, K)
        mass = probs.sum(dim=0)
        posterior = probs[1] / mass.clamp_min(torch.finfo(probs.dtype).tiny)
        return (1.0 - label_smoothing) * posterior + label_smoothing / 2.0

    def best_response_prover_loss(self, prover: nn.Module, label_smoothing: float) -> Tensor:
        """Exact prover loss ``E[-log q(token)]`` against the best-responding verifier.

        The expectation is over uniform bits and the prover's token distribution (no
        sampling); gradients flow through both the distribution and the response ``q``.
        """
        if not isinstance(prover, BECProver):
            raise TypeError(f"closed-form best response needs a BECProver, got {type(prover)}")
        q = self.best_response(prover, label_smoothing)
        device = q.device
        probs = prover.token_probs(torch.tensor([0.0, 1.0], device=device))
        log_q = torch.log(q.clamp_min(torch.finfo(q.dtype).tiny))
        return -(0.5 * probs * log_q).sum()
