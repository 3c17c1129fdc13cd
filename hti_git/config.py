"""Settings: packaged defaults < hti.yaml < environment < command-line flags. Never secrets."""

from __future__ import annotations

import dataclasses
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError

from hti_git.errors import ConfigError
from hti_git.index.page import safe_yaml

CONFIG_FILE = "hti.yaml"
METHODS = ("auto", "fast", "standard")


@dataclass(frozen=True)
class Settings:
    """Every tunable of compile and ask, with the defaults a new repository starts from."""

    method: str = "auto"  # auto: standard when a model endpoint is configured, else fast
    provider: str = "openai"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"  # the *name* of the variable holding the key
    temperature: float = 0.0
    max_output_tokens: int = 4096
    timeout: float = 120.0
    concurrency: int = 8
    max_retries: int = 5
    chunk_size: int | None = None  # characters per extraction chunk; None (auto) sizes it from the limits below
    chunk_overlap: int = 2_000
    context_window: int | None = None  # the model's context in tokens, for local models with 8K-32K
    page_budget: int = 2_000  # tokens per page
    fanout: int = 12  # most links on one category page
    max_pages: int = 12  # pages read per question
    max_level_ups: int = 2  # branching budget
    max_text_bytes: int = 50_000_000

    def with_overrides(self, **overrides: Any) -> Settings:
        """A copy with every non-None override applied and validated."""
        given = {k: v for k, v in overrides.items() if v is not None}
        return _validated(dataclasses.replace(self, **given))

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def model_configured(self) -> bool:
        """True when a model endpoint is usable: a model name, and a key or a base URL to send it to.

        A model name alone (HTI_MODEL without a key) or a key alone (no model to ask) is not enough,
        so `auto` picks standard compiles and LLM navigation only when they can actually run.
        """
        return self.model_missing() is None

    def model_missing(self) -> str | None:
        """What the user must still set for the standard method and LLM navigation; None when nothing."""
        endpoint = bool(self.api_key or self.base_url)
        if self.model and endpoint:
            return None
        if self.model:
            return (f"model {self.model!r} is set but no endpoint: set {self.api_key_env} "
                    "(OpenAI), or OPENAI_BASE_URL for a local OpenAI-compatible server")
        if endpoint:
            given = self.api_key_env if self.api_key else "OPENAI_BASE_URL"
            return f"{given} is set but no model: set HTI_MODEL, `model:` in hti.yaml, or --model"
        return (f"set {self.api_key_env} and HTI_MODEL (OpenAI), or OPENAI_BASE_URL and HTI_MODEL "
                "(a local OpenAI-compatible server)")

    def resolved_method(self) -> str:
        if self.method != "auto":
            return self.method
        return "standard" if self.model_configured() else "fast"



def redact_url(url: str | None) -> str | None:
    """`url` with any user:password replaced by '***', for messages, reports and records.

    OPENAI_BASE_URL may carry credentials (https://user:token@proxy/v1); the URL is shown
    wherever an endpoint is named, so the credentials must never travel with it.
    """
    if not url:
        return url
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "***"
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


_TYPES = {f.name: f.type for f in fields(Settings)}


def _validated(settings: Settings) -> Settings:
    if settings.method not in METHODS:
        raise ConfigError(f"method must be one of {', '.join(METHODS)}, not {settings.method!r}")
    for name in ("chunk_size", "page_budget", "fanout", "max_pages", "concurrency", "max_text_bytes",
                 "max_output_tokens", "context_window"):
        value = getattr(settings, name)
        if value is not None and value <= 0:
            raise ConfigError(f"{name} must be positive, not {value}")
    if settings.chunk_overlap < 0 or (settings.chunk_size is not None and settings.chunk_overlap >= settings.chunk_size):
        raise ConfigError("chunk_overlap must be at least 0 and smaller than chunk_size")
    if settings.context_window is not None and settings.context_window < 2 * settings.max_output_tokens:
        raise ConfigError(f"context_window ({settings.context_window}) must be at least twice max_output_tokens "
                          f"({settings.max_output_tokens}): the prompt needs room too")
    if settings.fanout < 2:
        raise ConfigError("fanout must be at least 2")
    if settings.max_level_ups < 0 or settings.max_retries < 0:
        raise ConfigError("max_level_ups and max_retries cannot be negative")
    return settings


def _coerce(name: str, value: Any) -> Any:
    kind = _TYPES[name]
    if value is None or (str(value).strip().lower() == "auto" and "None" in str(kind)):
        return None
    try:
        if "int" in kind and "float" not in kind:
            return int(value)
        if "float" in kind:
            return float(value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name}: cannot read {value!r} ({exc})") from None


def settings_from_mapping(data: Mapping[str, Any], base: Settings | None = None) -> Settings:
    """Settings from a mapping such as a parsed hti.yaml; unknown keys are an error."""
    base = base or Settings()
    if any(k in data for k in ("api_key", "key", "secret")):
        raise ConfigError(f"{CONFIG_FILE} must not hold secrets; set api_key_env instead")
    unknown = sorted(set(data) - set(_TYPES))
    if unknown:
        raise ConfigError(f"unknown setting(s) in {CONFIG_FILE}: {', '.join(unknown)}")
    values = {k: _coerce(k, v) for k, v in data.items()}
    return _validated(dataclasses.replace(base, **values))


def read_config_file(path: Path) -> dict[str, Any]:
    """The mapping in a hti.yaml file ({} when absent)."""
    if not path.exists():
        return {}
    try:
        data = safe_yaml().load(path.read_text(encoding="utf-8"))  # no Python tags, no aliases
    except YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML ({str(exc).splitlines()[0]})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings")
    return data


def load_settings(root: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Settings for the index repository at `root`: defaults < hti.yaml < environment."""
    env = os.environ if env is None else env
    settings = Settings()
    if root is not None:
        settings = settings_from_mapping(read_config_file(Path(root) / CONFIG_FILE), settings)
    overrides: dict[str, Any] = {}
    if env.get("HTI_MODEL"):
        overrides["model"] = env["HTI_MODEL"]
    if env.get("OPENAI_BASE_URL"):
        overrides["base_url"] = env["OPENAI_BASE_URL"]
    if env.get("HTI_METHOD"):
        overrides["method"] = env["HTI_METHOD"]
    return settings.with_overrides(**overrides)


DEFAULT_CONFIG_TEXT = """\
# hti-git settings for this index repository. Secrets never go here: the API key is read from
# the environment variable named by api_key_env. Environment overrides: HTI_MODEL, OPENAI_BASE_URL,
# HTI_METHOD; command-line flags override everything.

# Compile method: auto (standard when a model endpoint is configured, else fast), fast or standard.
method: auto

# Model endpoint for the standard method and LLM navigation (any OpenAI-compatible server).
provider: openai
model:            # e.g. gpt-5-mini, or a local model name served by vLLM / Ollama / llama.cpp
base_url:         # e.g. http://localhost:11434/v1 ; empty = OpenAI
api_key_env: OPENAI_API_KEY
temperature: 0.0
max_output_tokens: 4096
timeout: 120      # seconds per model call
concurrency: 8    # model calls in flight at once
max_retries: 5

# Chunking (paper section 3.3): characters per extraction chunk and overlap between neighbours.
# auto sizes chunks so a model's reply fits max_output_tokens (and the prompt fits context_window).
chunk_size: auto
chunk_overlap: 2000
context_window:   # the model's context in tokens (e.g. 8192 for a small local model); empty = large

# Layout: most tokens on one page, most links on one category page.
page_budget: 2000
fanout: 12

# Navigation budgets per question: pages read, and level-ups to try another branch.
max_pages: 12
max_level_ups: 2

# Largest document text accepted, in bytes.
max_text_bytes: 50000000
"""
