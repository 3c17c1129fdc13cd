"""Replay the capable-model runs on the current code: do the README's model figures still hold?

`bench/records` keeps every request hti-git sent in the capable-model runs and the reply the model
wrote. This script serves those replies from a local OpenAI-compatible server (127.0.0.1, the test
stub) to the real `openai` SDK over HTTP, and runs hti-git as a user would:

1. `hti-git compile` of the distributor, co-branding and collaboration agreements (PDFs) with the
   `standard` method, answered from run 7's records (the indices runs 12-36 navigated);
2. `hti-git eval --method llm --no-judge` on those contracts' 115 CUAD questions, answered from run
   40 (the 34 and 81 questions of runs 35 and 36, asked again after the navigation prompt's rule on
   absence was reworded).

A request the records do not hold is a *miss*: the code now asks the model something it was never
asked, and the stub answers it with a placeholder. With no miss, every answer, citation, call and
fallback is the recorded model's, so the README's figures (93 of 115) hold for this code;
any miss means the model must be asked again.

    python bench/replay_runs.py            # HTI_SHARED=/path/to/shared to point elsewhere
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import CUAD, ROOT, bench_identity, require_cuad

from tests.support.openai_stub import OpenAIStub, default_handler

RECORDS = ROOT / "bench" / "records"
CONTRACTS = ("europeanmicroholdingsinc", "invendacorp", "microgenics")
COMPILE_RUN = ("run7-compile",)
ASK_RUNS = ("run40-navigate",)


# Prompt changes since the runs were recorded that change no meaning, matched on both sides and listed
# in the output: the extraction prompt asked for "under about 1400.0 words" (a float) until stop 29
REWORDED = ((re.compile(r"under about (\d+)\.0 words"), r"under about \1 words"),)


def request_key(request: dict) -> str:
    messages = [{**m, "content": reworded(m["content"])} for m in request["messages"]]
    return json.dumps({"messages": messages, "response_format": request.get("response_format"),
                       "max_tokens": request.get("max_tokens")}, sort_keys=True)


def reworded(text: str) -> str:
    for pattern, replacement in REWORDED:
        text = pattern.sub(replacement, text)
    return text


class Replayer:
    """Recorded replies by request; counts what it could and could not answer."""

    def __init__(self, runs: tuple[str, ...]):
        self.replies: dict[str, str] = {}
        for run in runs:
            with gzip.open(RECORDS / f"{run}.jsonl.gz", "rt", encoding="utf-8") as f:
                for line in f:
                    record = json.loads(line)
                    self.replies.setdefault(request_key(record["request"]), record["reply"])
        self.hits = 0
        self.misses: list[dict] = []

    def __call__(self, body: dict):
        reply = self.replies.get(request_key(body))
        if reply is None:
            self.misses.append(body)
            return default_handler(body)
        self.hits += 1
        return reply


def hti(args: list[str], cwd: Path, stub: OpenAIStub) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL")}
    env.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="replay", HTI_MODEL="recorded-model")
    proc = subprocess.run([sys.executable, "-m", "hti_git", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode != 0:
        print(f"hti-git {args[0]} failed: {' '.join(proc.stderr.strip().splitlines()[-1:])}")
    return proc.stdout


def main() -> int:
    require_cuad()
    bench_identity()
    pdfs = [str(p) for name in CONTRACTS for p in sorted((CUAD / "contracts").glob(f"{name}*.pdf"))]
    questions = [line for line in (CUAD / "qa.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip() and json.loads(line)["doc"].startswith(CONTRACTS)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "qa.jsonl").write_text("\n".join(questions) + "\n", encoding="utf-8")
        subprocess.run([sys.executable, "-m", "hti_git", "init", str(root / "idx")], check=True, capture_output=True)
        compile_replies = Replayer(COMPILE_RUN)
        with OpenAIStub(compile_replies) as stub:
            hti(["compile", *pdfs, "--method", "standard", "-j", "1"], root / "idx", stub)
        print(f"compile (run 7's records): {compile_replies.hits} requests replayed, "
              f"{len(compile_replies.misses)} never asked before (rewordings matched: "
              f"{', '.join(p.pattern for p, _ in REWORDED)})")
        if compile_replies.misses:
            print("the compile asks the model something new: the README's model figures need a new run")
            return 1
        ask_replies = Replayer(ASK_RUNS)
        with OpenAIStub(ask_replies) as stub:
            out = hti(["eval", str(root / "qa.jsonl"), "--method", "llm", "--no-judge", "--no-cache",
                       "--out", str(root / "out")], root / "idx", stub)
        print(f"ask {len(questions)} questions (run 40's records): {ask_replies.hits} requests replayed, "
              f"{len(ask_replies.misses)} never asked before")
        print(out.strip().splitlines()[2] if len(out.strip().splitlines()) > 2 else out)
    missed = len(compile_replies.misses) + len(ask_replies.misses)
    print("the README's model figures hold for this code" if not missed else
          f"{missed} request(s) changed: ask a capable model again (README: 'standard compile with a capable model')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
