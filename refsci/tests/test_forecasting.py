import json
import os
import pathlib

from refsci import forecasters

from conftest import read_all, run_cli

SCHEMAS = pathlib.Path(__file__).resolve().parents[2] / "adapters" / "refsci" / "schemas"
AIRLINE = ["--time-column", "period", "--value-column", "passengers"]


def test_checked_in_schemas_match_the_registry():
    # Regenerate with: .venv/bin/python -m refsci forecasters schema adapters/refsci/schemas
    for workflow, value in forecasters.schemas().items():
        on_disk = (SCHEMAS / f"{workflow}.json").read_text(encoding="utf-8")
        assert on_disk == forecasters.schema_text(value), (
            f"{workflow}.json is stale: run 'python -m refsci forecasters schema "
            "adapters/refsci/schemas'")


def test_registry_offers_runnable_forecasters_with_tags():
    reg = forecasters.registry()
    assert "NaiveForecaster" in reg and len(reg) >= 3
    naive = reg["NaiveForecaster"]
    assert naive["tags"]["probabilistic"] is True
    assert naive["params"]["sp"]["type"] == "integer"
    assert "random_state" not in naive["params"]
    # Composites that need other estimators, and forecasters needing packages beyond the
    # pins, are not offered.
    assert "EnsembleForecaster" not in reg and "BaggingForecaster" not in reg


def test_forecast_airline_writes_table_model_and_plot(datasets_dir, tmp_path):
    out = tmp_path / "f"
    proc = run_cli(["forecast", "--data", datasets_dir / "airline.csv", *AIRLINE,
                    "--horizon", "12", "--estimator", "NaiveForecaster",
                    "--params", '{"sp": 12}', "--out", out])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert sorted(os.listdir(out)) == ["forecast.csv", "metrics.json", "model.json",
                                       "model.pkl", "plot.png"]
    lines = (out / "forecast.csv").read_text().splitlines()
    assert lines[0] == "horizon,time,forecast,lower,upper"
    assert lines[1].startswith("1,1961-01,417,") and lines[12].startswith("12,1961-12,432,")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_obs"] == 144 and metrics["freq"] == "M" and metrics["intervals"] is True
    assert (out / "plot.png").read_bytes().startswith(b"\x89PNG")
    again = tmp_path / "g"
    assert run_cli(["forecast", "--data", datasets_dir / "airline.csv", *AIRLINE,
                    "--horizon", "12", "--params", '{"sp": 12}', "--out", again]).returncode == 0
    assert read_all(out) == read_all(again)


def test_evaluate_reports_every_metric_per_fold(datasets_dir, tmp_path):
    out = tmp_path / "e"
    proc = run_cli(["forecast-evaluate", "--data", datasets_dir / "airline.csv", *AIRLINE,
                    "--horizon", "6", "--folds", "2", "--window", "sliding", "--sp", "12",
                    "--estimator", "PolynomialTrendForecaster", "--out", out])
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    for name in ("mae", "rmse", "mape", "smape", "mase"):
        assert len(metrics["per_fold"][name]) == 2
        assert abs(metrics[name] - sum(metrics["per_fold"][name]) / 2) < 1e-12
    folds = (out / "folds.csv").read_text().splitlines()
    assert folds[0].startswith("fold,train_start,train_end,n_train,test_start,test_end")
    # sliding: both folds train on the same number of periods
    assert folds[1].split(",")[3] == folds[2].split(",")[3] == "132"


def test_unknown_estimator_and_bad_columns_are_refused(datasets_dir, tmp_path):
    proc = run_cli(["forecast", "--data", datasets_dir / "airline.csv", *AIRLINE,
                    "--horizon", "3", "--estimator", "Prophet", "--out", tmp_path / "a"])
    assert proc.returncode == 2 and "unknown estimator 'Prophet' (--estimator)" in proc.stderr
    assert "NaiveForecaster" in proc.stderr
    proc = run_cli(["forecast", "--data", datasets_dir / "airline.csv", "--time-column",
                    "passengers", "--value-column", "period", "--horizon", "3",
                    "--out", tmp_path / "b"])
    assert proc.returncode == 3, proc.stderr
    proc = run_cli(["forecast", "--data", datasets_dir / "airline.csv", *AIRLINE,
                    "--horizon", "3", "--params", '{"nope": 1}', "--out", tmp_path / "c"])
    assert proc.returncode == 4 and "unknown parameter(s) for NaiveForecaster: nope" in proc.stderr


def test_gaps_are_named(tmp_path):
    data = tmp_path / "gappy.csv"
    rows = [f"2000-{m:02d},{m}" for m in range(1, 13) if m not in (4, 5)]
    data.write_text("month,value\n" + "\n".join(rows) + "\n")
    proc = run_cli(["forecast", "--data", data, "--time-column", "month", "--value-column",
                    "value", "--horizon", "2", "--out", tmp_path / "o"])
    assert proc.returncode == 3, proc.stderr
    assert "2 missing period(s): 2000-04, 2000-05" in proc.stderr


def test_exogenous_future_rows(tmp_path):
    data = tmp_path / "x.csv"
    lines = ["t,y,x"] + [f"{i},{2 * i + 1},{i}" for i in range(1, 21)] + ["21,,21", "22,,22"]
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o"
    proc = run_cli(["forecast", "--data", data, "--time-column", "t", "--value-column", "y",
                    "--exogenous", "x", "--horizon", "2", "--estimator", "TSB", "--out", out])
    assert proc.returncode == 0, proc.stderr
    assert (out / "forecast.csv").read_text().splitlines()[1].startswith("1,21,")
    proc = run_cli(["forecast", "--data", data, "--time-column", "t", "--value-column", "y",
                    "--exogenous", "x", "--horizon", "2", "--out", tmp_path / "n"])
    assert proc.returncode == 2 and "does not use exogenous columns" in proc.stderr
