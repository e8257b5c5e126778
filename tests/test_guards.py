"""The pieces the public app's guards are made of, on hand-made cases: rate limits and the probes' line, signed
credentials, text normalisation, high-depth images, the model budget, capped record files, atomic files.
The attacks themselves, against a real server, are in tests/test_security_public.py and its neighbours."""
from __future__ import annotations

import io
import json
import threading
import time

import numpy as np
import pytest
from PIL import Image

from backend.core import text
from backend.core.credentials import Credentials
from backend.core.files import atomic_folder, atomic_path, copy_atomic
from backend.core.images import ImageFileError, open_image, rgb
from backend.core.ratelimit import RateLimit, Refused, Slots, client_key
from backend.core.tabular import RecordFileError, read_records
from backend.models import budget
from backend.models.spec import ModelLoadError


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_rate_limit_counts_costs_in_a_sliding_window_per_key():
    clock = Clock()
    limit = RateLimit(3, 60, clock=clock)
    assert [limit.spend("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limit.spend("a") == pytest.approx(60.0)  # the oldest of the three expires a minute after it was spent
    assert limit.spend("b") == 0.0  # another key has its own budget
    clock.now += 30
    assert limit.retry_after("a") == pytest.approx(30.0) and limit.used("a") == 3
    clock.now += 30.5
    assert limit.spend("a") == 0.0 and limit.used("a") == 1
    bytes_ = RateLimit(100, 10, clock=clock)
    assert bytes_.spend("c", 70) == 0.0 and bytes_.spend("c", 40) > 0 and bytes_.spend("c", 30) == 0.0
    assert bytes_.retry_after("c", 101) == float("inf")  # more than the whole budget never fits


def test_the_line_runs_a_few_queues_a_few_and_refuses_the_rest_at_once():
    line = Slots(running=1, waiting=1, busy_message="busy")
    entered, release = threading.Event(), threading.Event()

    def hold():
        with line.slot():
            entered.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait(5)
    waiter = threading.Thread(target=lambda: line.slot().__enter__())  # waits for the running one
    waiter.start()
    deadline = time.monotonic() + 5
    while line.admitted < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert line.full
    with pytest.raises(Refused, match="busy"), line.slot():
        pass
    release.set()
    holder.join(5)
    waiter.join(5)
    assert not holder.is_alive() and not waiter.is_alive()


def test_a_spaced_turn_starts_a_spacing_after_the_one_before_and_an_unspaced_one_at_once():
    clock = Clock()
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    line = Slots(running=1, waiting=2, busy_message="busy", spacing_s=1.0, clock=clock, sleep=sleep)
    started = []
    for spaced, elapsed in ((True, 0.2), (True, 0.3), (False, 0.1), (True, 1.5), (True, 0.0)):
        with line.slot(spaced=spaced):
            started.append(clock.now)
            clock.now += elapsed
    assert started == [1000.0, 1001.0, 1001.3, 1002.3, 1003.8]  # 1 s apart, but the unspaced one and after a slow one
    assert slept == [0.0, pytest.approx(0.8), 0.0, pytest.approx(0.9), 0.0]
    assert not line.full and line.admitted == 0


def test_the_client_behind_a_proxy_is_the_address_the_proxy_added():
    headers = {"x-forwarded-for": "6.6.6.6, 203.0.113.7"}  # the client claimed 6.6.6.6; the proxy saw .7
    assert client_key("10.0.0.2", headers, behind_proxy=True) == "203.0.113.7"
    assert client_key("127.0.0.1", headers, behind_proxy=False) == "127.0.0.1"  # no proxy: the header is a lie
    assert client_key("10.0.0.2", {}, behind_proxy=True) == "10.0.0.2"


def test_a_credential_is_signed_expires_and_is_revoked_everywhere():
    clock = Clock()
    issuer = Credentials("admin", lifetime_s=60, clock=clock)
    token = issuer.issue("alice", role="admin")
    assert issuer.verify(token)["sub"] == "alice"
    assert issuer.verify(token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]) is None  # forged
    assert Credentials("admin", 60).verify(token) is None  # another process's key
    assert Credentials("participant", 60, key=b"k" * 32).verify(
        Credentials("admin", 60, key=b"k" * 32).issue("alice")) is None  # another purpose
    copy = str(token)
    assert issuer.revoke(token) and issuer.verify(copy) is None and not issuer.revoke(copy)
    fresh = issuer.issue("alice")
    clock.now += 61
    assert issuer.verify(fresh) is None
    assert issuer.verify(None) is None and issuer.verify("x" * 5000) is None and issuer.verify(42) is None


@pytest.mark.parametrize("value, problem", [
    ("\u200b\u200b", "invisible formatting character (U+200B ZERO WIDTH SPACE) at position 1"),
    ("a dog\u202ethgir", "invisible formatting character (U+202E RIGHT-TO-LEFT OVERRIDE) at position 6"),
    ("ali\x00ce", "contains a control character (U+0000) at position 4"),
    ("two\nlines", "control character (U+000A"),
    ("   ", "is empty"),
    ("\u00a0\u3000", "is empty"),  # a non-breaking and an ideographic space: white space once NFKC'd
    ("x" * 1001, "has 1,001 characters; the limit is 1,000"),
])
def test_names_and_captions_with_invisible_or_control_characters_are_refused(value, problem):
    assert problem in text.problem(value, max_chars=1000)
    with pytest.raises(text.TextError, match="^the caption "):
        text.clean(value, "the caption", max_chars=1000)


def test_compatibility_forms_become_plain_text():
    assert text.clean("  ａ ｄｏｇ ﬁshing\u00a0today ", "the caption") == "a dog fishing today"
    assert text.clean("café", "x") == text.clean("cafe\u0301", "x") == "café"  # one form of each accent
    assert text.clean("Ünïcödé 日本 мир", "x") == "Ünïcödé 日本 мир"  # other scripts are kept


def sixteen_bit_grey(values: np.ndarray) -> Image.Image:
    buffer = io.BytesIO()
    Image.fromarray(values.astype(np.uint16)).save(buffer, format="PNG")
    return Image.open(io.BytesIO(buffer.getvalue()))


def test_sixteen_bit_grey_is_scaled_to_eight_bits_not_clipped_to_white():
    ramp = np.linspace(0, 65535, 256).round().reshape(1, 256).repeat(4, axis=0)
    image = sixteen_bit_grey(ramp)
    assert image.mode == "I;16" and set(np.asarray(image.convert("RGB"))[0, 1:, 0]) == {255}  # PIL's own: white
    converted = np.asarray(rgb(image))
    assert converted.shape == (4, 256, 3) and (converted[..., 0] == converted[..., 2]).all()
    assert converted[0, :, 0].tolist() == list(range(256))  # 257 * k scales back to k exactly
    buffer = io.BytesIO()
    sixteen_bit_grey(ramp).save(buffer, format="PNG")
    assert np.asarray(open_image(buffer.getvalue()))[0, :, 0].tolist() == list(range(256))
    floats = Image.fromarray(np.array([[0.0, 0.25, 1.0]], dtype=np.float32))
    assert np.asarray(rgb(floats))[0, :, 0].tolist() == [0, 64, 255]
    with pytest.raises(ImageFileError, match="pixels run from 0 to 70000"):
        rgb(Image.fromarray(np.array([[0, 70000]], dtype=np.int32)))


def test_the_budget_counts_a_models_parameters_from_its_config_alone():
    import open_clip

    cfg = open_clip.get_model_config("ViT-B-32")
    assert budget.parameter_count(cfg) == 151_277_313  # open_clip's ViT-B-32, as built
    big = open_clip.get_model_config("ViT-bigG-14")
    started = time.perf_counter()
    with pytest.raises(ModelLoadError, match="2,539,567,105 parameters; this server loads models of at most "
                                             "500,000,000"):
        budget.check("hf-hub:evil/huge", big, 500_000_000)
    assert time.perf_counter() - started < 30  # counted, not built (the meta device allocates nothing)
    with pytest.raises(ModelLoadError, match="1,000,000 layers"):
        budget.parameter_count({**cfg, "vision_cfg": {**cfg["vision_cfg"], "layers": 1_000_000}})
    with pytest.raises(ModelLoadError, match="has no model_cfg"):
        budget.check("local-dir:x", None, 10)
    budget.check("anything", None, None)  # no budget (the command line): nothing to count


def test_a_record_file_is_capped_by_size_and_by_records(tmp_path):
    many = tmp_path / "many.csv"
    many.write_text("caption,negative_caption\n" + "a,b\n" * 11)
    with pytest.raises(RecordFileError, match="holds more than 10 records; the limit is 10"):
        read_records(many, "campaign file", max_records=10)
    assert len(read_records(many, "campaign file", max_records=11)) == 11
    lines = tmp_path / "many.jsonl"
    lines.write_text("".join(json.dumps({"caption": "a", "negative_caption": "b"}) + "\n" for _ in range(11)))
    with pytest.raises(RecordFileError, match="more than 10 records"):
        read_records(lines, "campaign file", max_records=10)
    with pytest.raises(RecordFileError, match=f"has {many.stat().st_size:,} bytes; the limit is 20"):
        read_records(many, "campaign file", max_bytes=20)


def test_atomic_writes_leave_the_old_file_or_the_new_one_never_half(tmp_path):
    target = tmp_path / "answers.csv"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as partial:
        partial.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]
    source = tmp_path / "source.bin"
    source.write_bytes(b"x" * 10_000)
    copy_atomic(source, tmp_path / "copy.bin")
    assert (tmp_path / "copy.bin").read_bytes() == source.read_bytes()
    folder = tmp_path / "dataset"
    with atomic_folder(folder) as building:
        (building / "rows").write_text("250")
    with pytest.raises(RuntimeError), atomic_folder(folder) as building:
        (building / "rows").write_text("100")
        raise RuntimeError("killed")
    assert (folder / "rows").read_text() == "250" and sorted(p.name for p in tmp_path.iterdir()) == [
        "answers.csv", "copy.bin", "dataset", "source.bin"]
