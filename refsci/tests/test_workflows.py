import csv
import json

import pytest

from refsci import cli

from conftest import read_all

CASES = [
    ("regress", "linear", "diabetes", ["--target", "target"]),
    ("regress", "ridge", "diabetes", ["--target", "target"]),
    ("regress", "random_forest", "diabetes", ["--target", "target"]),
    ("classify", "logistic", "breast_cancer", ["--target", "target"]),
    ("classify", "random_forest", "wine", ["--target", "target"]),
    ("classify", "knn", "iris", ["--target", "target"]),
    ("cluster", "kmeans", "iris", ["--exclude", "target"]),
    ("cluster", "agglomerative", "wine", ["--exclude", "target", "--n-clusters", "4"]),
    ("cluster", "gmm", "iris", ["--exclude", "target"]),
    ("decompose", "pca", "wine", ["--exclude", "target"]),
    ("decompose", "truncated_svd", "breast_cancer", ["--exclude", "target", "--n-components", "3"]),
    ("decompose", "fastica", "iris", ["--exclude", "target"]),
    ("anomaly", "isolation_forest", "breast_cancer", ["--exclude", "target"]),
    ("anomaly", "lof", "wine", ["--exclude", "target", "--contamination", "0.05"]),
    ("anomaly", "elliptic_envelope", "iris", ["--exclude", "target"]),
]

METRIC_KEYS = {
    "regress": {"r2", "rmse", "mae", "n_train", "n_test"},
    "classify": {"accuracy", "f1_macro", "precision_macro", "recall_macro", "n_train", "n_test",
                 "classes"},
    "cluster": {"silhouette", "n_clusters", "cluster_sizes"},
    "decompose": {"n_components", "explained_variance_ratio"},
    "anomaly": {"n_anomalies", "anomaly_fraction"},
}
MODEL_KEYS = {"workflow", "model", "estimator", "params", "features", "target", "seed",
              "refsci_version", "sklearn_version", "data_sha256", "rows"}
EXTRA_FILE = {
    "regress": ("predictions.csv", ["row", "y_true", "y_pred"]),
    "classify": ("predictions.csv", ["row", "y_true", "y_pred"]),
    "cluster": ("labels.csv", ["row", "label"]),
    "decompose": ("components.csv", None),
    "anomaly": ("labels.csv", ["row", "label", "score"]),
}


def _run(workflow, model, dataset, extra, datasets_dir, out):
    argv = [workflow, "--data", str(datasets_dir / f"{dataset}.csv"), "--out", str(out),
            "--model", model, "--seed", "3", *extra]
    assert cli.main(argv) == 0


@pytest.mark.parametrize("workflow,model,dataset,extra", CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_workflow_outputs_and_determinism(workflow, model, dataset, extra, datasets_dir, tmp_path):
    out1, out2 = tmp_path / "a" / "nested", tmp_path / "b"
    _run(workflow, model, dataset, extra, datasets_dir, out1)
    _run(workflow, model, dataset, extra, datasets_dir, out2)

    files1 = read_all(out1)
    extra_name, header = EXTRA_FILE[workflow]
    assert set(files1) == {"metrics.json", "model.json", extra_name}
    assert files1 == read_all(out2), "same input and seed must give byte-identical outputs"

    metrics = json.loads(files1["metrics.json"])
    assert METRIC_KEYS[workflow] <= set(metrics)
    model_json = json.loads(files1["model.json"])
    assert MODEL_KEYS <= set(model_json)
    assert model_json["workflow"] == workflow
    assert model_json["model"] == model
    assert model_json["seed"] == 3
    assert model_json["refsci_version"] == "0.1.0"
    assert len(model_json["data_sha256"]) == 64
    if "random_state" in model_json["params"]:
        assert model_json["params"]["random_state"] == 3
    assert "target" not in model_json["features"]
    for name, content in files1.items():
        text = content.decode("utf-8")
        assert "\r" not in text
        assert str(tmp_path) not in text
        assert "NaN" not in text and "Infinity" not in text
        if name.endswith(".json"):
            assert text.endswith("}\n")

    rows = list(csv.reader(files1[extra_name].decode().splitlines()))
    if header is None:
        k = metrics["n_components"]
        header = ["row"] + [f"c{i}" for i in range(1, k + 1)]
    assert rows[0] == header
    assert len(rows) > 1

    if workflow in ("regress", "classify"):
        assert metrics["n_test"] == len(rows) - 1
        assert model_json["target"] == "target"
    if workflow == "classify":
        assert metrics["classes"] == sorted(metrics["classes"])
    if workflow == "decompose":
        ratio = metrics["explained_variance_ratio"]
        assert (ratio is None) == (model == "fastica")
        assert metrics["n_components"] == len(rows[0]) - 1
    if workflow == "cluster":
        assert sum(metrics["cluster_sizes"]) == model_json["rows"]
    if workflow == "anomaly":
        labels = {r[1] for r in rows[1:]}
        assert labels <= {"1", "-1"}
        assert metrics["n_anomalies"] == sum(1 for r in rows[1:] if r[1] == "-1")


def test_different_seed_changes_split(datasets_dir, tmp_path):
    base = ["regress", "--data", str(datasets_dir / "diabetes.csv"), "--target", "target"]
    assert cli.main([*base, "--out", str(tmp_path / "a"), "--seed", "1"]) == 0
    assert cli.main([*base, "--out", str(tmp_path / "b"), "--seed", "2"]) == 0
    assert read_all(tmp_path / "a")["predictions.csv"] != read_all(tmp_path / "b")["predictions.csv"]


def test_params_reach_the_estimator(datasets_dir, tmp_path):
    argv = ["regress", "--data", str(datasets_dir / "diabetes.csv"), "--target", "target",
            "--out", str(tmp_path), "--model", "ridge", "--params", '{"alpha": 0.5}']
    assert cli.main(argv) == 0
    params = json.loads((tmp_path / "model.json").read_text())["params"]
    assert params["alpha"] == 0.5
