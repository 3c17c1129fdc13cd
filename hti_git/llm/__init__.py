"""Model layer: the Provider seam, the OpenAI-compatible provider, cache, ledger, retries, prompts.

Compile and ask code builds one client with `build_client(settings, cache_path)` and calls
`await client.complete(stage, messages, schema=..., label=...)`; everything else is plumbing.
"""

from hti_git.llm.cache import ResponseCache, cache_key
from hti_git.llm.client import ModelClient, build_client, run_batch
from hti_git.llm.ledger import STAGES, UsageLedger
from hti_git.llm.prompts import Template, load_template
from hti_git.llm.provider import Completion, Provider, TransientModelError, Usage
from hti_git.llm.scripted import ScriptedProvider

__all__ = [
    "STAGES",
    "Completion",
    "ModelClient",
    "Provider",
    "ResponseCache",
    "ScriptedProvider",
    "Template",
    "TransientModelError",
    "Usage",
    "UsageLedger",
    "build_client",
    "cache_key",
    "load_template",
    "run_batch",
]
