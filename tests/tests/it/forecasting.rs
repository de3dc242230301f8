//! Time-series forecasting through the real `scimcp` binary on the embedded refsci adapter
//! (sktime underneath), as an MCP client drives it: the airline series forecast a year ahead
//! with two forecasters and judged by temporal cross-validation, each equal to the direct
//! CLI byte for byte; wrong requests refused before any process; a campaign that compares
//! forecasters by MASE.

use std::collections::BTreeMap;
use std::time::Duration;

use scimcp_e2e::harness::{Harness, campaign_result_on, run_on, tree_hashes};
use serde_json::{Value, json};

const WITHIN: Duration = Duration::from_secs(600);

fn result_hashes(result: &Value) -> BTreeMap<String, String> {
    result["artifacts"]["items"]
        .as_array()
        .expect("artifacts")
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_string(),
                a["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn direct_ok(h: &Harness, args: &[&str]) {
    let out = h.direct(args);
    assert!(
        out.status.success(),
        "direct {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn airline_forecast_with_two_forecasters_equals_the_direct_cli() {
    let h = Harness::start().await.unwrap();
    let caps = h
        .ok("get_capabilities", json!({"workflow": "forecast"}))
        .await;
    let schema = &caps["workflows"][0]["parameters_schema"];
    let offered = schema["properties"]["estimator"]["enum"]
        .as_array()
        .unwrap();
    for name in ["NaiveForecaster", "PolynomialTrendForecaster"] {
        assert!(
            offered.contains(&json!(name)),
            "{name} not offered: {offered:?}"
        );
    }
    // (estimator, its parameters, the same as the scientist types them)
    let cases = [
        ("NaiveForecaster", json!({"sp": 12}), r#"{"sp":12}"#, true),
        (
            "PolynomialTrendForecaster",
            json!({"degree": 2}),
            r#"{"degree":2}"#,
            false,
        ),
    ];
    for (estimator, params, params_text, intervals) in cases {
        let request = json!({"workflow": "forecast", "dataset": "builtin:airline",
            "parameters": {"time_column": "period", "value_column": "passengers", "horizon": 12,
                           "estimator": estimator, "params": params}});
        let (validation, result) = run_on(&h.session, request, WITHIN).await;
        assert_eq!(result["state"], "succeeded", "{estimator}: {result:#}");
        assert_eq!(result["plan_sha256"], validation["plan_sha256"]);
        assert_eq!(result["problems"]["total"], 0, "{result:#}");
        let metrics = &result["reported"]["metrics"];
        assert_eq!(metrics["horizon"], 12, "{result:#}");
        assert_eq!(metrics["n_obs"], 144);
        assert_eq!(metrics["intervals"], intervals, "{metrics:#}");
        let plot = result["artifacts"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["path"] == "plot.png")
            .expect("a plot");
        assert_eq!(plot["media_type"], "image/png", "{plot:#}");

        let out = format!("direct/{estimator}");
        direct_ok(
            &h,
            &[
                "forecast",
                "--data",
                "data/airline.csv",
                "--time-column",
                "period",
                "--value-column",
                "passengers",
                "--horizon",
                "12",
                "--estimator",
                estimator,
                "--coverage",
                "0.9",
                "--seed",
                "0",
                "--params",
                params_text,
                "--out",
                &out,
            ],
        );
        let via_mcp = result_hashes(&result);
        for file in [
            "forecast.csv",
            "metrics.json",
            "model.json",
            "model.pkl",
            "plot.png",
        ] {
            assert!(via_mcp.contains_key(file), "{file} missing: {via_mcp:?}");
        }
        assert_eq!(
            via_mcp,
            tree_hashes(&h.cwd.join(&out)),
            "{estimator}: MCP and direct artifacts differ"
        );
    }
}

#[tokio::test]
async fn forecast_evaluate_metrics_equal_the_direct_cli() {
    let h = Harness::start().await.unwrap();
    let request = json!({"workflow": "forecast_evaluate", "dataset": "data/airline.csv",
        "parameters": {"time_column": "period", "value_column": "passengers", "horizon": 6,
                       "folds": 2, "sp": 12, "estimator": "NaiveForecaster",
                       "params": {"sp": 12}}});
    let (_, result) = run_on(&h.session, request, WITHIN).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let metrics = &result["reported"]["metrics"];
    for name in ["mae", "rmse", "mape", "smape", "mase"] {
        assert!(metrics[name].is_number(), "{name}: {metrics:#}");
        assert_eq!(
            metrics["per_fold"][name].as_array().map(Vec::len),
            Some(2),
            "{metrics:#}"
        );
    }
    assert_eq!(metrics["window"], "expanding");
    direct_ok(
        &h,
        &[
            "forecast-evaluate",
            "--data",
            "data/airline.csv",
            "--time-column",
            "period",
            "--value-column",
            "passengers",
            "--horizon",
            "6",
            "--estimator",
            "NaiveForecaster",
            "--folds",
            "2",
            "--window",
            "expanding",
            "--sp",
            "12",
            "--seed",
            "0",
            "--params",
            r#"{"sp":12}"#,
            "--out",
            "direct/evaluate",
        ],
    );
    assert_eq!(
        result_hashes(&result),
        tree_hashes(&h.cwd.join("direct/evaluate"))
    );
}

#[tokio::test]
async fn an_unknown_estimator_and_a_text_value_column_are_refused_naming_the_field() {
    let h = Harness::start().await.unwrap();
    let e = h
        .err(
            "validate_analysis",
            json!({"workflow": "forecast", "dataset": "data/airline.csv",
                   "parameters": {"time_column": "period", "value_column": "passengers",
                                  "horizon": 12, "estimator": "Prophet"}}),
        )
        .await;
    assert_eq!(e["code"], "invalid_parameters", "{e:#}");
    assert_eq!(e["field"], "parameters.estimator", "{e:#}");
    assert!(
        e.to_string().contains("NaiveForecaster"),
        "allowed values: {e:#}"
    );

    // `period` holds 1949-01, …: text, not numbers.
    let e = h
        .err(
            "validate_analysis",
            json!({"workflow": "forecast_evaluate", "dataset": "data/airline.csv",
                   "parameters": {"time_column": "passengers", "value_column": "period",
                                  "horizon": 12}}),
        )
        .await;
    assert_eq!(e["code"], "invalid_parameters", "{e:#}");
    let text = e.to_string();
    assert!(
        text.contains("value_column") && text.contains("period"),
        "{e:#}"
    );
    // A parameter the chosen forecaster does not take is refused too.
    let e = h
        .err(
            "validate_analysis",
            json!({"workflow": "forecast", "dataset": "data/airline.csv",
                   "parameters": {"time_column": "period", "value_column": "passengers",
                                  "horizon": 12, "estimator": "TrendForecaster",
                                  "params": {"sp": 12}}}),
        )
        .await;
    assert_eq!(e["code"], "invalid_parameters", "{e:#}");
    assert!(
        // Run directories only: the runs directory also holds the server's run index.
        !h.runs_dir().exists()
            || !fs_err::read_dir(h.runs_dir())
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("run-")),
        "a refused request started a run"
    );
}

#[tokio::test]
async fn a_campaign_over_three_forecasters_gives_a_mase_table() {
    let h = Harness::start().await.unwrap();
    let estimators = [
        "NaiveForecaster",
        "PolynomialTrendForecaster",
        "ARARForecaster",
    ];
    let started = h
        .ok(
            "start_campaign",
            json!({"workflow": "forecast_evaluate", "max_concurrent": 2, "confirm": true,
                   "metrics": ["metrics.estimator", "metrics.mase"],
                   "grid": {"datasets": ["builtin:airline"],
                            "vary": {"estimator": estimators, "seed": [0]},
                            "fixed": {"time_column": "period", "value_column": "passengers",
                                      "horizon": 12, "folds": 1, "sp": 12}}}),
        )
        .await;
    assert_eq!(started["started"], true, "{started:#}");
    let campaign_id = started["campaign_id"].as_str().unwrap().to_string();
    let done = campaign_result_on(&h.session, &campaign_id, WITHIN).await;
    assert_eq!(done["counts"]["succeeded"], 3, "{done:#}");
    let table = &done["table"];
    assert_eq!(
        table["columns"],
        json!(["metrics.estimator", "metrics.mase"]),
        "{done:#}"
    );
    let mut by_estimator = BTreeMap::new();
    for row in table["rows"]["items"].as_array().unwrap() {
        let values = row["values"].as_array().unwrap();
        let mase = values[1].as_f64().expect("a MASE");
        assert!(mase.is_finite() && mase > 0.0, "{row:#}");
        by_estimator.insert(values[0].as_str().unwrap().to_string(), mase);
    }
    assert_eq!(
        by_estimator.keys().map(String::as_str).collect::<Vec<_>>(),
        {
            let mut e = estimators.to_vec();
            e.sort();
            e
        }
    );
    let summary = table["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["column"] == "metrics.mase")
        .expect("a MASE summary");
    assert_eq!(summary["count"], 3, "{summary:#}");
    let least = by_estimator.values().cloned().fold(f64::INFINITY, f64::min);
    assert_eq!(summary["min"].as_f64(), Some(least), "{summary:#}");
}
