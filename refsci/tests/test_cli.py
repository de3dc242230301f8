import json
import os
import re

from refsci import cli

from conftest import read_all, run_cli

ERROR_LINE = re.compile(r"^refsci: error: .+ \(.+\); .+$")


def assert_one_error_line(proc, code):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip("\n").split("\n")
    assert len(lines) == 1, proc.stderr
    assert ERROR_LINE.match(lines[0]), lines[0]
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_version():
    proc = run_cli(["--version"])
    assert proc.returncode == 0
    assert proc.stdout == "refsci 0.1.0\n"


def test_datasets_list(capsys):
    assert cli.main(["datasets", "list"]) == 0
    lines = capsys.readouterr().out.strip().split("\n")
    ids = [line.split("\t")[0] for line in lines]
    assert ids == ["iris", "wine", "diabetes", "breast_cancer", "airline"]
    for line in lines:
        ident, rows, cols, desc = line.split("\t")
        assert int(rows) > 0 and int(cols) > 1 and desc


def test_datasets_export(tmp_path, capsys):
    out = tmp_path / "x" / "y"
    assert cli.main(["datasets", "export", str(out)]) == 0
    assert len(capsys.readouterr().out.strip().split("\n")) == 5
    assert sorted(os.listdir(out)) == ["airline.csv", "breast_cancer.csv", "diabetes.csv",
                                       "iris.csv", "wine.csv"]
    iris = (out / "iris.csv").read_bytes()
    assert iris.startswith(b"sepal_length_cm,sepal_width_cm,petal_length_cm,petal_width_cm,target\n")
    assert b"\r" not in iris
    # The tables (not the airline series, whose columns are period and passengers).
    for name in ["breast_cancer.csv", "diabetes.csv", "iris.csv", "wine.csv"]:
        header = (out / name).read_text().split("\n")[0].split(",")
        assert header[-1] == "target"
        assert all(re.fullmatch(r"[a-z0-9_]+", h) for h in header)
    again = tmp_path / "again"
    assert cli.main(["datasets", "export", str(again)]) == 0
    assert read_all(out) == read_all(again)


def test_interactive_matches_flags(datasets_dir, tmp_path):
    data = datasets_dir / "diabetes.csv"
    inter = tmp_path / "inter"
    proc = run_cli(["regress", "--interactive", "--out", inter], input_text=f"{data}\ntarget\nridge\n7\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout
    prompts = ["Data CSV path: ", "Target column: ",
               "Model [linear/ridge/random_forest] (default linear): ", "Seed (default 0): "]
    positions = [out.index(p) for p in prompts]
    assert positions == sorted(positions)
    flags = tmp_path / "flags"
    assert cli.main(["regress", "--data", str(data), "--target", "target", "--out", str(flags),
                     "--model", "ridge", "--seed", "7"]) == 0
    assert read_all(inter) == read_all(flags)
    assert json.loads((inter / "model.json").read_text())["model"] == "ridge"


def test_interactive_defaults_and_no_questions_when_given(datasets_dir, tmp_path):
    data = datasets_dir / "diabetes.csv"
    proc = run_cli(["regress", "--interactive", "--out", tmp_path / "d"], input_text=f"{data}\ntarget\n\n\n")
    assert proc.returncode == 0, proc.stderr
    model = json.loads((tmp_path / "d" / "model.json").read_text())
    assert (model["model"], model["seed"]) == ("linear", 0)
    proc = run_cli(["regress", "--interactive", "--data", data, "--target", "target", "--model", "linear",
                    "--seed", "0", "--out", tmp_path / "e"], input_text="")
    assert proc.returncode == 0, proc.stderr
    assert "Seed" not in proc.stdout and "Data CSV path" not in proc.stdout


def test_interactive_eof_exits_2(datasets_dir, tmp_path):
    proc = run_cli(["regress", "--interactive", "--out", tmp_path / "o"],
                   input_text=f"{datasets_dir / 'diabetes.csv'}\n")
    line = assert_one_error_line(proc, 2)
    assert line.startswith("refsci: error: input ended while asking for the target column")
    assert not (tmp_path / "o" / "metrics.json").exists()


def test_interactive_invalid_answers_exit_2(datasets_dir, tmp_path):
    data = datasets_dir / "diabetes.csv"
    proc = run_cli(["regress", "--interactive", "--out", tmp_path / "o"], input_text=f"{data}\ntarget\nsvm\n0\n")
    assert "Model [" in assert_one_error_line(proc, 2)
    proc = run_cli(["regress", "--interactive", "--out", tmp_path / "o"], input_text=f"{data}\ntarget\n\nabc\n")
    assert "Seed" in assert_one_error_line(proc, 2)
    proc = run_cli(["regress", "--interactive", "--out", tmp_path / "o"], input_text="\n")
    assert_one_error_line(proc, 2)


def test_missing_data_without_interactive_is_usage_error(tmp_path):
    proc = run_cli(["regress", "--target", "y", "--out", tmp_path])
    assert "--data" in assert_one_error_line(proc, 2)


def test_unknown_target_exits_3(datasets_dir, tmp_path):
    proc = run_cli(["regress", "--data", datasets_dir / "diabetes.csv", "--target", "nope",
                    "--out", tmp_path / "o"])
    line = assert_one_error_line(proc, 3)
    assert "'nope'" in line


def test_data_errors_exit_3(datasets_dir, tmp_path):
    (tmp_path / "text.csv").write_text("a,b,c\n1,x,2\n3,y,4\n5,z,6\n")
    (tmp_path / "gap.csv").write_text("a,b\n1,\n2,3\n4,5\n")
    (tmp_path / "empty.csv").write_text("")
    cases = [
        ["cluster", "--data", tmp_path / "missing.csv"],
        ["cluster", "--data", tmp_path / "text.csv"],
        ["cluster", "--data", tmp_path / "gap.csv"],
        ["cluster", "--data", tmp_path / "empty.csv"],
        ["cluster", "--data", datasets_dir / "iris.csv", "--exclude", "nope"],
        ["cluster", "--data", tmp_path / "gap.csv", "--exclude", "b", "--n-clusters", "5"],
        ["regress", "--data", tmp_path / "text.csv", "--target", "a"],
    ]
    for args in cases:
        assert_one_error_line(run_cli([*args, "--out", tmp_path / "o"]), 3)


def test_bad_params_exit_4(datasets_dir, tmp_path):
    base = ["regress", "--data", datasets_dir / "diabetes.csv", "--target", "target", "--out", tmp_path / "o"]
    for extra in (["--params", "[1, 2]"], ["--params", "{not json"],
                  ["--model", "ridge", "--params", '{"no_such_arg": 1}'],
                  ["--model", "ridge", "--params", '{"alpha": -3}'],
                  ["--test-size", "1.5"], ["--seed", "-1"]):
        assert_one_error_line(run_cli([*base, *extra]), 4)


def test_debug_env_does_not_change_exit_code(datasets_dir, tmp_path):
    proc = run_cli(["regress", "--data", datasets_dir / "diabetes.csv", "--target", "nope",
                    "--out", tmp_path], env={"REFSCI_DEBUG": "1"})
    assert proc.returncode == 3


def test_sleep_writes_worker_pid(datasets_dir, tmp_path):
    out = tmp_path / "o"
    proc = run_cli(["regress", "--data", datasets_dir / "diabetes.csv", "--target", "target",
                    "--out", out, "--sleep-s", "0.5"])
    assert proc.returncode == 0, proc.stderr
    assert (out / "worker.pid").read_text().strip().isdigit()
    assert {"metrics.json", "model.json", "predictions.csv", "worker.pid"} == set(os.listdir(out))


def test_config_applies_and_flags_win(datasets_dir, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model": "ridge", "seed": 5, "test_size": 0.3,
                                  "params": {"alpha": 2.0}, "n_clusters": 4}))
    data = str(datasets_dir / "diabetes.csv")
    assert cli.main(["regress", "--data", data, "--target", "target", "--out", str(tmp_path / "a"),
                     "--config", str(config)]) == 0
    model = json.loads((tmp_path / "a" / "model.json").read_text())
    metrics = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert (model["model"], model["seed"], model["params"]["alpha"]) == ("ridge", 5, 2.0)
    assert metrics["n_test"] == 133  # ceil(0.3 * 442)

    assert cli.main(["regress", "--data", data, "--target", "target", "--out", str(tmp_path / "b"),
                     "--config", str(config), "--seed", "9", "--model", "linear",
                     "--test-size", "0.25", "--params", "{}"]) == 0
    model = json.loads((tmp_path / "b" / "model.json").read_text())
    metrics = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert (model["model"], model["seed"]) == ("linear", 9)
    assert metrics["n_test"] == 111

    cluster_cfg = tmp_path / "cluster.json"
    cluster_cfg.write_text(json.dumps({"n_clusters": 4, "exclude": ["target"]}))
    assert cli.main(["cluster", "--data", str(datasets_dir / "iris.csv"), "--out", str(tmp_path / "c"),
                     "--config", str(cluster_cfg)]) == 0
    metrics = json.loads((tmp_path / "c" / "metrics.json").read_text())
    model = json.loads((tmp_path / "c" / "model.json").read_text())
    assert metrics["n_clusters"] == 4 and "target" not in model["features"]


def test_bad_config_is_usage_error(datasets_dir, tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"bogus": 1}')
    proc = run_cli(["cluster", "--data", datasets_dir / "iris.csv", "--out", tmp_path / "o",
                    "--config", config])
    assert_one_error_line(proc, 2)
