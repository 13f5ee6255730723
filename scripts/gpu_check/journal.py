"""Reading a tuning's evaluations in order: our journal (a Kernel Tuner cache, possibly left
unclosed) and Kernel Tuner's results list give the same thing, one time (ms) or failure per
evaluation, from which the best found after k evaluations is read the same way for both."""

import json
import math

STEPS = (25, 50, 100)


def best_after(times, steps=STEPS):
    """times: per evaluation in order, a float (ms) or None (failed). The best valid time among
    the first k evaluations, per k (None when none of them was valid). Where fewer than k were
    made, it is the best of those made: compare with the number of evaluations."""
    out = {}
    for k in steps:
        head = [t for t in times[:k] if t is not None]
        out[str(k)] = min(head) if head else None
    return out


def load_cache(path):
    """A Kernel Tuner cache file as a dict, repairing one left unclosed (as a tuning leaves its
    journal, and as Kernel Tuner leaves its own caches)."""
    with open(path, encoding="utf-8") as f:
        text = f.read().rstrip()
    for tail in ("", "}}", "}"):
        candidate = text + tail
        if candidate.endswith(",}}") or candidate.endswith(",}"):
            candidate = candidate.rstrip("}").rstrip(",") + tail
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    # Cut back to the last complete record.
    cut = text.rstrip().rstrip(",")
    while cut:
        cut = cut[: cut.rfind("}") + 1]
        for tail in ("}}", "}"):
            try:
                return json.loads(cut + tail)
            except json.JSONDecodeError:
                pass
        cut = cut[:-1]
    raise ValueError(f"{path}: not a Kernel Tuner cache")


def entry_time(entry):
    """An entry's time in ms, or None for a failure (a string such as "RuntimeFailedConfig")."""
    t = entry.get("time")
    if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t):
        return float(t)
    return None


def cache_times(path):
    """(times in evaluation order, entries) of a journal."""
    doc = load_cache(path)
    entries = list(doc.get("cache", {}).values())
    return [entry_time(e) for e in entries], entries
