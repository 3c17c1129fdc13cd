"""Replay the capable-model runs on the current code: do the README's model figures still hold?

`bench/records` keeps every request hti-git sent in the capable-model runs and the reply the model
wrote. This script serves those replies from a local OpenAI-compatible server (127.0.0.1, the test
stub) to the real `openai` SDK over HTTP, and runs hti-git as a user would:

1. `hti-git compile` of the distributor, co-branding and collaboration agreements (PDFs) with the
   `standard` method, answered from the records of `COMPILE_RUNS`;
2. `hti-git eval --method llm --no-judge` on those contracts' 115 CUAD questions, answered from the
   records of `ASK_RUNS`.

A request the records do not hold is a *miss*: the code now asks the model something it was never
asked, and the stub answers it with a placeholder. With no miss, every answer, citation, call and
fallback is the recorded model's, so the README's figures hold for this code; any miss means the
model must be asked again. `--ask-misses URL` sends only the misses to a live OpenAI-compatible
endpoint (a capable model behind `../shared/tools/manual_endpoint.py`) and records what it
answers in `--record NAME` (bench/records/NAME-compile and NAME-navigate), so a change that alters a
few requests is measured by asking the model those few, not the whole run again.

    python bench/replay_runs.py            # HTI_SHARED=/path/to/shared to point elsewhere
    python bench/replay_runs.py --ask-misses http://127.0.0.1:8766/v1[,http://127.0.0.1:8767/v1] --record run43
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from benchlib import CUAD, ROOT, bench_identity, require_cuad

from tests.support.openai_stub import OpenAIStub, default_handler

RECORDS = ROOT / "bench" / "records"
CONTRACTS = ("europeanmicroholdingsinc", "invendacorp", "microgenics")
COMPILE_RUNS = ("run42-compile", "run43-compile")
ASK_RUNS = ("run42-navigate", "run43-navigate", "run46-navigate", "run50-navigate", "run55-navigate")  # the first run holding a request answers it
RECORDED = ("messages", "response_format", "max_tokens")


def request_key(request: dict) -> str:
    return json.dumps({k: request.get(k) for k in RECORDED}, sort_keys=True)


class Replayer:
    """Recorded replies by request; counts what it could and could not answer. A miss is answered by
    the endpoint at `ask` when one is given (and recorded), else by a placeholder."""

    def __init__(self, runs: tuple[str, ...], ask: str | None = None):
        self.replies: dict[str, str] = {}
        for run in runs:
            path = RECORDS / f"{run}.jsonl.gz"
            if not path.exists():
                continue
            with gzip.open(path, "rt", encoding="utf-8") as f:
                for line in f:
                    record = json.loads(line)
                    self.replies.setdefault(request_key(record["request"]), record["reply"])
        self.ask = ask
        self.hits = 0
        self.misses: list[dict] = []
        self.asked: list[dict] = []

    def __call__(self, body: dict):
        reply = self.replies.get(request_key(body))
        if reply is not None:
            self.hits += 1
            return reply
        self.misses.append(body)
        if self.ask is None:
            return default_handler(body)
        reply = ask_endpoint(self.ask, body)
        self.asked.append({"request": {k: body[k] for k in RECORDED if k in body}, "reply": reply})
        return reply

    def save(self, name: str) -> None:
        if not self.asked:
            return
        with gzip.open(RECORDS / f"{name}.jsonl.gz", "at", encoding="utf-8") as f:
            for row in self.asked:
                f.write(json.dumps({"queue": name, **row}, ensure_ascii=False) + "\n")


def ask_endpoint(base_url: str, body: dict) -> str:
    """The reply text a live OpenAI-compatible endpoint gives `body` (it may take minutes: a person or
    a capable model answers a manual endpoint by hand)."""
    request = urllib.request.Request(f"{base_url.rstrip('/')}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json", "Authorization": "Bearer replay"})
    with urllib.request.urlopen(request, timeout=3600) as response:
        return json.load(response)["choices"][0]["message"]["content"]


def hti(args: list[str], cwd: Path, stub: OpenAIStub) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL")}
    env.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="replay", HTI_MODEL="recorded-model")
    proc = subprocess.run([sys.executable, "-m", "hti_git", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode != 0:
        print(f"hti-git {args[0]} failed: {' '.join(proc.stderr.strip().splitlines()[-1:])}")
    return proc.stdout


def main() -> int:
    args = sys.argv[1:]
    # one endpoint for both, or two (compile,ask): a model that compiled a document must not answer
    # questions about it
    urls = args[args.index("--ask-misses") + 1].split(",") if "--ask-misses" in args else [None]
    ask, ask_questions = urls[0], urls[-1]
    record = args[args.index("--record") + 1] if "--record" in args else None
    if (ask is None) != (record is None):
        print("--ask-misses URL and --record NAME go together")
        return 2
    compile_runs = COMPILE_RUNS + ((f"{record}-compile",) if record else ())
    ask_runs = ASK_RUNS + ((f"{record}-navigate",) if record else ())
    require_cuad()
    bench_identity()
    pdfs = [str(p) for name in CONTRACTS for p in sorted((CUAD / "contracts").glob(f"{name}*.pdf"))]
    questions = [line for line in (CUAD / "qa.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip() and json.loads(line)["doc"].startswith(CONTRACTS)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "qa.jsonl").write_text("\n".join(questions) + "\n", encoding="utf-8")
        subprocess.run([sys.executable, "-m", "hti_git", "init", str(root / "idx")], check=True, capture_output=True)
        if ask:  # a reply written by hand takes minutes: the model calls must wait for it
            config = root / "idx" / "hti.yaml"
            config.write_text(re.sub(r"(?m)^timeout: *\d+", "timeout: 3600", config.read_text(encoding="utf-8")),
                              encoding="utf-8")
        compile_replies = Replayer(compile_runs, ask)
        with OpenAIStub(compile_replies) as stub:
            hti(["compile", *pdfs, "--method", "standard", "-j", "1"], root / "idx", stub)
        if record:
            compile_replies.save(f"{record}-compile")
        print(f"compile ({', '.join(compile_runs)}): {compile_replies.hits} requests replayed, "
              f"{len(compile_replies.misses)} never asked before" + (f", {len(compile_replies.asked)} asked" if ask else ""))
        if compile_replies.misses and not ask:
            print("the compile asks the model something new: the README's model figures need a new run")
            return 1
        ask_replies = Replayer(ask_runs, ask_questions)
        with OpenAIStub(ask_replies) as stub:
            out = hti(["eval", str(root / "qa.jsonl"), "--method", "llm", "--no-judge", "--no-cache", "-j", "4",
                       "--out", str(root / "out")], root / "idx", stub)
        if record:
            ask_replies.save(f"{record}-navigate")
        print(f"ask {len(questions)} questions ({', '.join(ask_runs)}): {ask_replies.hits} requests replayed, "
              f"{len(ask_replies.misses)} never asked before" + (f", {len(ask_replies.asked)} asked" if ask else ""))
        print(out.strip().splitlines()[2] if len(out.strip().splitlines()) > 2 else out)
    if ask:
        asked = len(compile_replies.asked) + len(ask_replies.asked)
        print(f"{asked} request(s) asked and recorded in bench/records/{record}-*: the figures above are this run's")
        return 0
    missed = len(compile_replies.misses) + len(ask_replies.misses)
    print("the README's model figures hold for this code" if not missed else
          f"{missed} request(s) changed: ask a capable model again (README: 'standard compile with a capable model')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
