"""--params is an allowlist: named, typed, bounded options per model, the same in the CLI and in
the adapter's JSON schemas; anything else (a cache directory, a path, a callable, n_jobs) is
refused before an estimator is built."""
import json
import os

import pytest

from refsci.models import DEFAULT_MODEL, MODELS
from refsci.params import ALLOWED, schema_parts

from conftest import run_cli

SCHEMAS = os.path.join(os.path.dirname(__file__), "..", "..", "adapters", "refsci", "schemas")
FILES = {"regress": "regression", "classify": "classification", "cluster": "clustering",
         "decompose": "decomposition", "anomaly": "anomaly"}


@pytest.mark.parametrize("workflow", sorted(FILES))
def test_the_adapter_schemas_state_exactly_the_cli_allowlist(workflow):
    with open(os.path.join(SCHEMAS, FILES[workflow] + ".json")) as f:
        schema = json.load(f)
    params, rules = schema_parts(workflow, DEFAULT_MODEL[workflow])
    assert schema["properties"]["params"] == params, \
        "regenerate the schema's params from refsci.params.schema_parts"
    assert schema["allOf"] == rules
    assert set(ALLOWED[workflow]) == set(MODELS[workflow])


@pytest.mark.parametrize("params, message", [
    ({"memory": "/tmp/cache"}, "does not accept option 'memory'"),
    ({"n_jobs": -1}, "does not accept option 'n_jobs'"),
    ({"linkage": "ward", "metric": "cosine"}, "Ward can only work with euclidean distances"),
    ({"linkage": 3}, "must be one of"),
])
def test_options_outside_the_allowlist_are_refused(datasets_dir, tmp_path, params, message):
    proc = run_cli(["cluster", "--data", datasets_dir / "iris.csv", "--exclude", "target",
                    "--model", "agglomerative", "--params", json.dumps(params),
                    "--out", tmp_path / "out"])
    assert proc.returncode == 4, proc.stderr  # refsci's exit status for a refused model option
    assert message in proc.stderr, proc.stderr
    assert not os.path.exists("/tmp/cache") or "memory" not in params


def test_bounds_and_types_are_checked(datasets_dir, tmp_path):
    cases = [({"n_estimators": 0}, "at least 1"), ({"n_estimators": 2.5}, "an integer"),
             ({"bootstrap": "yes"}, "true or false"), ({"max_depth": 10**9}, "at most 1000")]
    for params, message in cases:
        proc = run_cli(["regress", "--data", datasets_dir / "diabetes.csv", "--target", "target",
                        "--model", "random_forest", "--params", json.dumps(params),
                        "--out", tmp_path / "out"])
        assert proc.returncode == 4 and message in proc.stderr, (params, proc.stderr)
    proc = run_cli(["regress", "--data", datasets_dir / "diabetes.csv", "--target", "target",
                    "--model", "random_forest", "--params", '{"n_estimators": 5.0}',
                    "--out", tmp_path / "ok"])
    assert proc.returncode == 0, proc.stderr
