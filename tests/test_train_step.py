"""One optimizer step: DDP's skipped syncs under accumulation, and the fp16 scaler's order (unscale, clip, step)."""
import contextlib
import math

import torch

from backend.train.step import grad_scaler, train_step, training_precision

NO_AUTOCAST = contextlib.nullcontext()


class Recorder(torch.nn.Module):
    """A model with DDP's `no_sync` that records, per backward, whether gradients would be all-reduced."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(3))
        self.logit_scale = torch.nn.Parameter(torch.zeros([]))
        self.syncing = True
        self.synced = []

    @contextlib.contextmanager
    def no_sync(self):
        self.syncing = False
        yield
        self.syncing = True


def objective(model, batch):
    """Loss = batch . weight; records the sync state when its backward runs."""
    loss = (model.weight * batch).sum()
    loss.register_hook(lambda grad: model.synced.append(model.syncing))
    return loss, {"part": loss.detach() * 2}


def test_only_the_last_micro_batch_synchronises_gradients():
    model = Recorder()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    batches = [torch.full((3,), float(i)) for i in (1, 2, 6)]
    loss, parts = train_step(model, objective, optimizer, batches, NO_AUTOCAST, math.log(100))
    assert model.synced == [False, False, True]
    assert torch.equal(model.weight.detach(), torch.full((3,), 1.0 - 3.0))  # mean gradient (1 + 2 + 6) / 3
    assert loss.item() == 9.0 and parts["part"].item() == 18.0  # means over the micro-batches (3, 6, 18)


def test_gradients_are_unscaled_before_clipping():
    """A scaled gradient (x 65536) clipped at 100 would shrink; the true one (norm 5) must pass unclipped."""
    model = Recorder()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=65536.0)
    train_step(model, objective, optimizer, [torch.tensor([3.0, 4.0, 0.0])], NO_AUTOCAST, math.log(100),
               scaler=scaler, clip_norm=100.0)
    assert torch.allclose(model.weight.detach(), torch.tensor([-2.0, -3.0, 1.0]))
    assert scaler.get_scale() == 65536.0  # no overflow: the step was taken, the scale kept


def test_clipping_bounds_the_step():
    model = Recorder()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e6)
    train_step(model, objective, optimizer, [torch.tensor([3.0, 4.0, 0.0])], NO_AUTOCAST, math.log(100),
               clip_norm=1e-3)
    assert torch.linalg.vector_norm(model.weight.detach() - 1.0) <= 1e6 * 1e-3 * (1 + 1e-5)


def test_auto_precision_trains_fp32_off_cuda_and_fp16_always_brings_a_scaler():
    assert training_precision("cpu", "auto") == "fp32" and training_precision("mps", "auto") == "fp32"
    assert training_precision("cpu", "bf16") == "bf16"
    assert grad_scaler("cpu", "fp16") is not None
    assert grad_scaler("cuda:0", "bf16") is None and grad_scaler("cpu", "fp32") is None
