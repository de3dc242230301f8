"""The forecasters refsci offers, discovered from sktime's registry, and their JSON schemas.

The list is not written by hand: it is every forecaster `all_estimators("forecaster")` knows
that (1) needs no package beyond refsci's pins (sktime's own dependency check) and fits and predicts a short series here, (2) can be
built without arguments (composites that need other estimators, such as ensembles and
reductions, cannot be named by a client on their own), and (3) does not need the horizon
before fitting (temporal cross-validation refits each fold with the same horizon, and these
are the slow search-style wrappers). `refsci forecasters schema DIR` writes the workflows'
parameter schemas from this list; a test holds the checked-in files to it.
"""

import inspect
import json
import os
import re
import warnings

# Tags shown to a client choosing a forecaster, with the name it reads.
TAGS = {
    "probabilistic": "capability:pred_int",
    "exogenous": "capability:exogenous",
    "multivariate": "capability:multivariate",
    "missing_values": "capability:missing_values",
}
DEFAULT_ESTIMATOR = "NaiveForecaster"
# Set from --seed, never by a client directly: one seed decides every random choice.
SEEDED = "random_state"


# sktime 1.2 warns on every forecaster it builds that a config default changes in 1.3: the
# config does not matter to a fit-once forecaster, and the text would bury refsci's own lines.
NOISE = re.compile(r"``remember_data``")


class Warnings:
    """Collect the warnings raised inside; on exit, report those that are not sktime's
    config notice on stdout (`report=True`) or drop them. Recording, rather than filters,
    because sktime's own pandas-warning guard puts a `default` filter first when it exits,
    which would let warnings through later in the same block."""

    def __init__(self, report):
        self.report = report

    def __enter__(self):
        self._ctx = warnings.catch_warnings(record=True)
        self._records = self._ctx.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)
        seen = set()
        for record in self._records:
            text = str(record.message).strip()
            if NOISE.search(text) or not self.report:
                continue
            first = text.splitlines()[0] if text else ""
            line = f"{record.category.__name__}: {first}"
            if line not in seen:
                seen.add(line)
                print(f"refsci: warning: {line}", flush=True)
        return False


def _candidates():
    from sktime.registry import all_estimators
    from sktime.utils.dependencies import _check_estimator_deps

    for name, cls in all_estimators("forecaster", return_names=True):
        if not _check_estimator_deps(cls, severity="none"):
            continue
        sig = inspect.signature(cls.__init__)
        required = [p for p in sig.parameters.values()
                    if p.name != "self" and p.default is inspect.Parameter.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if required:
            continue
        try:
            instance = cls()
        except Exception:  # noqa: BLE001 - a forecaster that cannot be built alone is left out
            continue
        if instance.get_tag("requires-fh-in-fit", False):
            continue
        if any(_is_estimator(v) for v in instance.get_params(deep=False).values()):
            continue
        if not _runs(cls):
            continue
        yield name, cls, instance


def _runs(cls):
    """Whether the forecaster fits and predicts a short monthly series with refsci's pins
    (some import an optional package only when fitting, past sktime's dependency check)."""
    import numpy as np
    import pandas as pd

    index = pd.period_range("2000-01", periods=36, freq="M")
    y = pd.Series(100.0 + np.arange(36) + 5.0 * np.sin(np.arange(36)), index=index)
    try:
        cls().fit(y, fh=[1, 2]).predict()
    except Exception:  # noqa: BLE001 - whatever the reason, it does not run here
        return False
    return True


def _is_estimator(value):
    return hasattr(value, "get_params") and hasattr(value, "fit")


def _param_schema(value):
    """The JSON Schema type of a parameter from its default, or None when it cannot be typed."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer", "minimum": -1000000, "maximum": 1000000}
    if isinstance(value, float):
        return {"type": "number", "minimum": -1000000.0, "maximum": 1000000.0}
    if isinstance(value, str):
        return {"type": "string", "minLength": 1, "maxLength": 64}
    return None


def registry():
    """Name -> {class, tags, params (name -> schema), defaults}, sorted by name."""
    with Warnings(report=False):
        out = {}
        for name, cls, instance in _candidates():
            defaults = instance.get_params(deep=False)
            params = {}
            for key, value in sorted(defaults.items()):
                schema = _param_schema(value)
                if key != SEEDED and schema is not None:
                    params[key] = schema
            out[name] = {
                "class": cls,
                "tags": {label: bool(instance.get_tag(tag, False)) for label, tag in TAGS.items()},
                "params": params,
                "seeded": SEEDED in defaults,
            }
        return dict(sorted(out.items()))


def _describe(reg):
    parts = []
    for name, entry in reg.items():
        tags = [label for label, on in entry["tags"].items() if on]
        parts.append(f"{name} ({', '.join(tags) if tags else 'point forecasts only'})")
    return "; ".join(parts)


def _common_properties(reg):
    params_union = {}
    for entry in reg.values():
        for key, schema in entry["params"].items():
            params_union.setdefault(key, schema)
    takes = "; ".join(f"{name}: {', '.join(e['params']) or 'none'}" for name, e in reg.items())
    return {
        "time_column": {
            "type": "string", "minLength": 1, "maxLength": 256,
            "x-scimcp-column": {"complete": True},
            "description": "Column holding the time of each observation: dates (2024-01, 2024-01-31, …) or whole numbers; one row per period, in any order.",
        },
        "value_column": {
            "type": "string", "minLength": 1, "maxLength": 256,
            "x-scimcp-column": {"numeric": True, "complete": True},
            "description": "Numeric column to forecast.",
        },
        "exogenous": {
            "type": "array", "maxItems": 32, "uniqueItems": True,
            "items": {"type": "string", "minLength": 1, "maxLength": 256},
            "x-scimcp-column": {"numeric": True, "complete": True},
            "description": "Numeric columns known in advance that the forecaster may use (only forecasters tagged exogenous). For `forecast`, the table's last `horizon` rows carry their future values and leave value_column empty.",
        },
        "freq": {
            "type": "string", "minLength": 1, "maxLength": 16, "pattern": "^[A-Za-z0-9-]+$",
            "description": "pandas frequency of the series (M, Q, D, h, …); inferred from the time column when left out. Missing periods are refused, naming the first gaps.",
        },
        "horizon": {
            "type": "integer", "minimum": 1, "maximum": 1000,
            "description": "Number of periods to forecast after the last observation (forecast) or in each test window (forecast_evaluate).",
        },
        "estimator": {
            "type": "string", "enum": list(reg), "default": DEFAULT_ESTIMATOR,
            "description": "sktime forecaster, with its tags: " + _describe(reg) + ".",
        },
        "seed": {
            "type": "integer", "minimum": 0, "maximum": 4294967295, "default": 0,
            "description": "Random seed, passed as random_state to forecasters that take one; the same series and seed give identical results.",
        },
        "params": {
            "type": "object", "default": {}, "additionalProperties": False,
            "properties": dict(sorted(params_union.items())),
            "description": "Forecaster options, each named and typed from the forecaster's defaults; which ones a forecaster takes: " + takes + ".",
        },
    }


def _per_estimator(reg):
    rules = []
    for name, entry in reg.items():
        cond = {"properties": {"estimator": {"const": name}}, "required": ["estimator"]}
        if name == DEFAULT_ESTIMATOR:
            cond = {"anyOf": [{"not": {"required": ["estimator"]}}, cond]}
        rules.append({"if": cond, "then": {"properties": {"params": {
            "additionalProperties": False, "properties": entry["params"]}}}})
    return rules


def schemas(reg=None):
    """The parameter schemas of `forecast` and `forecast_evaluate`, as JSON values."""
    reg = registry() if reg is None else reg
    forecast = _common_properties(reg)
    # The future rows of exogenous columns leave the value empty (refsci checks that only
    # those rows do); forecast_evaluate needs every value.
    forecast["value_column"]["x-scimcp-column"] = {"numeric": True}
    forecast["coverage"] = {
        "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.9,
        "description": "Coverage of the prediction interval, for probabilistic forecasters (others give point forecasts only).",
    }
    evaluate = _common_properties(reg)
    evaluate["folds"] = {
        "type": "integer", "minimum": 1, "maximum": 50, "default": 3,
        "description": "Number of temporal cross-validation folds: test windows of `horizon` periods at the end of the series, one after the other.",
    }
    evaluate["window"] = {
        "type": "string", "enum": ["expanding", "sliding"], "default": "expanding",
        "description": "expanding: each fold trains on everything before its test window; sliding: on a window of fixed length (the first fold's).",
    }
    evaluate["sp"] = {
        "type": "integer", "minimum": 1, "maximum": 1000, "default": 1,
        "description": "Seasonal period of the naive forecast that MASE scales by (12 for monthly data with a yearly season).",
    }
    out = {}
    for wf, props, title in (("forecast", forecast, "refsci forecast parameters"),
                             ("forecast_evaluate", evaluate,
                              "refsci forecast_evaluate parameters")):
        out[wf] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": title,
            "type": "object",
            "additionalProperties": False,
            "required": ["time_column", "value_column", "horizon"],
            "properties": props,
            "allOf": _per_estimator(reg),
        }
    return out


def schema_text(value):
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write_schemas(out_dir):
    """Write forecast.json and forecast_evaluate.json into out_dir; return the paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for wf, value in schemas().items():
        path = os.path.join(out_dir, f"{wf}.json")
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(schema_text(value))
        paths.append(path)
    return paths


def list_lines():
    lines = []
    for name, entry in registry().items():
        tags = ",".join(label for label, on in entry["tags"].items() if on) or "-"
        lines.append(f"{name}\t{tags}\t{','.join(entry['params']) or '-'}")
    return lines
