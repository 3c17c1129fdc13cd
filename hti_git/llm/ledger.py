"""Usage ledger: calls and tokens per stage, for reports, provenance and commit trailers."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

from hti_git.llm.provider import Usage

# The order stages appear in reports; other stage names are allowed and sort after these.
STAGES = ("discover", "extract", "summarize", "layout", "navigate", "answer", "route", "check")


@dataclass
class StageUsage:
    """Counters for one stage. `calls` reached the model; `cached_calls` were served by the cache."""

    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def add(self, other: StageUsage) -> None:
        """Add another stage's counters into this one."""
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


class UsageLedger:
    """Thread-safe running totals per stage."""

    def __init__(self) -> None:
        self._stages: dict[str, StageUsage] = {}
        self._lock = threading.Lock()

    def record(self, stage: str, usage: Usage, *, cached: bool = False) -> None:
        """Count one completed call of `stage`; a cache hit counts as a cached call with zero tokens."""
        if not stage:
            raise ValueError("a model call needs a stage name")
        with self._lock:
            entry = self._stages.setdefault(stage, StageUsage())
            if cached:
                entry.cached_calls += 1
                return
            entry.calls += 1
            entry.input_tokens += usage.input_tokens
            entry.output_tokens += usage.output_tokens
            entry.cached_tokens += usage.cached_tokens

    def stage(self, name: str) -> StageUsage:
        """A copy of the counters of one stage (zeros when it made no calls)."""
        with self._lock:
            return StageUsage(**asdict(self._stages.get(name, StageUsage())))

    def total(self) -> StageUsage:
        """Counters summed over all stages."""
        result = StageUsage()
        with self._lock:
            for entry in self._stages.values():
                result.add(entry)
        return result

    def spent_tokens(self) -> int:
        """Input plus output tokens spent so far (what --max-tokens limits)."""
        total = self.total()
        return total.input_tokens + total.output_tokens

    def merge(self, other: UsageLedger) -> None:
        """Add another ledger's counters into this one."""
        for name, entry in other._ordered():
            with self._lock:
                self._stages.setdefault(name, StageUsage()).add(entry)

    def _ordered(self) -> list[tuple[str, StageUsage]]:
        with self._lock:
            items = [(n, StageUsage(**asdict(e))) for n, e in self._stages.items()]
        rank = {name: i for i, name in enumerate(STAGES)}
        return sorted(items, key=lambda item: (rank.get(item[0], len(STAGES)), item[0]))

    def to_dict(self) -> dict:
        """{"stages": {stage: counters} in STAGES order, "total": counters}: stable for JSON/YAML."""
        return {
            "stages": {name: asdict(entry) for name, entry in self._ordered()},
            "total": asdict(self.total()),
        }

    def trailers(self) -> dict[str, str]:
        """Commit trailers summarising the totals, e.g. {"HTI-Tokens-In": "1200", ...}."""
        return usage_trailers(asdict(self.total()))


def usage_trailers(total: dict) -> dict[str, str]:
    """Commit trailers for usage totals (a ledger's, or a provenance's `usage`): calls and tokens."""
    return {
        "HTI-Calls": str(total.get("calls", 0)),
        "HTI-Cached-Calls": str(total.get("cached_calls", 0)),
        "HTI-Tokens-In": str(total.get("input_tokens", 0)),
        "HTI-Tokens-Out": str(total.get("output_tokens", 0)),
        "HTI-Tokens-Cached": str(total.get("cached_tokens", 0)),
    }
