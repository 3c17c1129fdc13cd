"""The paper's Figure 4 for one evaluation: accuracy against tokens per question, one point per system.

Needs matplotlib (the `eval` extra: pip install 'hti-git[eval]'); drawn with the Agg backend, so it
works without a display. Systems without an accuracy (full-document offline) are drawn as a dashed
vertical line at their cost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

FIGURE_INCHES = (7.0, 4.5)
DPI = 120


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def plot_spec(systems: list[dict[str, Any]]) -> dict[str, Any]:
    """Axis labels, title and points of the plot: what is drawn, as data (tests read it)."""
    basis = {s["tokens_basis"] for s in systems}
    xlabel = "tokens per question" + (" (measured)" if basis == {"measured"} else " (estimated: text read, no model)")
    points = [{"system": s["system"], "x": max(float(s["tokens_per_question"]), 1.0),
               "y": None if s["accuracy"] is None else round(100 * s["accuracy"], 2)} for s in systems]
    return {"title": "Accuracy vs answer cost", "xlabel": xlabel, "ylabel": "accuracy (%)", "points": points}


def write_plot(systems: list[dict[str, Any]], path: Path) -> dict[str, Any]:
    """Write the PNG to `path`; returns plot_spec(systems). Raises PlotUnavailable without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise PlotUnavailable("matplotlib is not installed (pip install 'hti-git[eval]')") from exc
    spec = plot_spec(systems)
    fig = Figure(figsize=FIGURE_INCHES, dpi=DPI)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_ylim(0, 105)
    xs = [p["x"] for p in spec["points"]]
    ax.set_xlim(min(xs) / 3, max(xs) * 3)
    for i, p in enumerate(spec["points"]):
        color = f"C{i % 10}"
        if p["y"] is None:
            ax.axvline(p["x"], color=color, linestyle="--", linewidth=1.2)
            ax.annotate(f"{p['system']} (accuracy n/a)", (p["x"], 4), rotation=90, ha="left", va="bottom",
                        fontsize=8, color=color, xytext=(4, 0), textcoords="offset points")
            continue
        ax.scatter([p["x"]], [p["y"]], s=60, color=color, zorder=3)
        ax.annotate(p["system"], (p["x"], p["y"]), xytext=(6, 6), textcoords="offset points", fontsize=9)
    ax.set_xlabel(spec["xlabel"])
    ax.set_ylabel(spec["ylabel"])
    ax.set_title(spec["title"])
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    spec["axes"] = {"xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "xscale": ax.get_xscale()}
    return spec
