"""Deterministic writers for JSON and CSV outputs."""

import json
import math
import os

import numpy as np


def json_safe(value):
    """Convert numpy/scikit-learn values into plain JSON values (NaN/inf -> None)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, type):
        return value.__name__
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    # Any other object: its class name only (repr may hold memory addresses).
    return f"<{type(value).__name__}>"


def dumps(obj):
    return json.dumps(json_safe(obj), indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_json(out_dir, name, obj):
    path = os.path.join(out_dir, name)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(dumps(obj))
    return path


def write_csv(out_dir, name, frame):
    path = os.path.join(out_dir, name)
    frame.to_csv(path, index=False, lineterminator="\n", float_format="%.10g", encoding="utf-8")
    return path
