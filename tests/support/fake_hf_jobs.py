"""A fake of Hugging Face Jobs at the API boundary: the four HfApi methods the HF job target calls (run, inspect,
fetch logs, cancel), scripted, each call recorded. The Hub's repo methods, for the backups, are faked in
tests/support/fake_hub.py."""
from __future__ import annotations

from huggingface_hub import JobInfo


class FakeHfApi:
    """The four HfApi methods the HF target uses, scripted: stages to report, log lines to stream."""

    def __init__(self, stages, logs):
        self.stages, self.logs, self.calls = list(stages), logs, []

    def run_job(self, *, image, command, env=None, secrets=None, flavor=None, timeout=None, labels=None,
                token=None, **rest):
        self.calls.append(("run_job", {"image": image, "command": command, "env": env, "secrets": secrets,
                                       "flavor": flavor, "labels": labels, "token": token}))
        return self._info("SCHEDULING")

    def inspect_job(self, *, job_id, namespace=None, token=None):
        self.calls.append(("inspect_job", {"job_id": job_id, "token": token}))
        stage, message = self.stages.pop(0) if len(self.stages) > 1 else self.stages[0]
        return self._info(stage, message)

    def fetch_job_logs(self, *, job_id, namespace=None, follow=False, tail=None, token=None):
        self.calls.append(("fetch_job_logs", {"job_id": job_id, "follow": follow, "token": token}))
        yield from self.logs

    def cancel_job(self, *, job_id, namespace=None, token=None):
        self.calls.append(("cancel_job", {"job_id": job_id, "token": token}))

    @staticmethod
    def _info(stage, message=None):
        return JobInfo(id="hf-123", owner={"id": "u1", "name": "me", "type": "user"},
                       status={"stage": stage, "message": message})
