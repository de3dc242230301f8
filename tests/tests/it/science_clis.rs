//! Two real scientific CLIs not written for scimcp, through the real `scimcp serve` as an MCP
//! client drives it, with the shipped manifests (`adapters/vina.toml`, `adapters/mafft.toml`)
//! and their example files: AutoDock Vina docking a ligand into a receptor from two client
//! files, and MAFFT writing its alignment on stdout.
//!
//! Needs `vina` and `mafft` on PATH (Debian: `apt-get install autodock-vina mafft`). Without
//! them these tests print why and pass, unless `SCIMCP_REQUIRE_SCIENCE_CLIS=1` (set by
//! `.ci/run`), which turns a missing program into a failure.

use std::path::{Path, PathBuf};

use scimcp_client::McpSession;
use serde_json::{Value, json};

/// Is every program in `programs` on PATH? When one is not: fail if the environment requires
/// the science CLIs, else say why the test is skipped.
fn have(programs: &[&str]) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| !std::env::split_paths(&path).any(|d| d.join(p).is_file()))
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("SCIMCP_REQUIRE_SCIENCE_CLIS").is_none(),
        "SCIMCP_REQUIRE_SCIENCE_CLIS is set but {} is not on PATH: apt-get install autodock-vina mafft",
        missing.join(", ")
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "SKIPPED: {} not on PATH (Debian: apt-get install autodock-vina mafft)",
            missing.join(", ")
        );
    }
    false
}

fn examples(adapter: &str) -> PathBuf {
    scimcp_e2e::workspace_root()
        .join("adapters")
        .join(adapter)
        .join("examples")
}

/// A server on one adapter, started in a project directory whose `data/` holds the client's
/// files (a name with a space and a non-ASCII letter, as real folders have).
struct Server {
    _root: tempfile::TempDir,
    data: PathBuf,
    home: PathBuf,
    session: McpSession,
}

impl Server {
    async fn start(adapter: &str) -> Server {
        let root = tempfile::Builder::new()
            .prefix("scimcp science ")
            .tempdir()
            .unwrap();
        let cwd = root.path().join("Projet d'amarrage");
        let data = cwd.join("data");
        let home = root.path().join("home");
        fs_err::create_dir_all(&data).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        let session = McpSession::spawn(
            &scimcp_e2e::sibling_binary("scimcp").unwrap(),
            &["serve".to_string(), "--adapter".into(), adapter.into()],
            &[
                ("SCIMCP_HOME".to_string(), home.display().to_string()),
                ("SCIMCP_LOG".to_string(), "warn".to_string()),
            ],
            &cwd,
        )
        .await
        .unwrap();
        Server {
            _root: root,
            data,
            home,
            session,
        }
    }

    /// Put a copy of `from` into the client's data folder as `name`; returns its path.
    fn give(&self, from: &Path, name: &str) -> String {
        let to = self.data.join(name);
        fs_err::copy(from, &to).unwrap();
        to.display().to_string()
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        scimcp_e2e::harness::ok_on(&self.session, tool, args).await
    }

    async fn err(&self, tool: &str, args: Value) -> Value {
        scimcp_e2e::harness::err_on(&self.session, tool, args).await
    }

    /// Validate, start with the validation id, and wait for the terminal result.
    async fn run(&self, request: Value) -> (Value, Value) {
        scimcp_e2e::harness::run_on(
            &self.session,
            request.clone(),
            std::time::Duration::from_secs(600),
        )
        .await
    }

    fn run_dirs(&self) -> usize {
        fs_err::read_dir(self.home.join("runs"))
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("run-"))
                    .count()
            })
            .unwrap_or(0)
    }
}

/// The imatinib site of the tutorial receptor (the centre of imatinib's atoms in PDB 1IEP).
fn dock_request(receptor: &str, ligand: &str, center_x: f64) -> Value {
    json!({
        "workflow": "dock",
        "inputs": {"receptor": receptor, "ligand": ligand},
        "parameters": {
            "center_x": center_x, "center_y": 78.4, "center_z": 66.2,
            "size_x": 20, "size_y": 20, "size_z": 20,
            "exhaustiveness": 1, "seed": 5
        }
    })
}

/// The artifact `path` of a result, with its bytes read from the output directory and its
/// reported hash checked against them.
fn artifact_bytes(result: &Value, path: &str) -> Vec<u8> {
    let items = result["artifacts"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no artifacts: {result:#}"));
    let record = items
        .iter()
        .find(|a| a["path"] == path)
        .unwrap_or_else(|| panic!("no artifact {path}: {result:#}"));
    let bytes = fs_err::read(Path::new(result["output_dir"].as_str().unwrap()).join(path)).unwrap();
    assert_eq!(
        record["sha256"].as_str().unwrap(),
        scimcp_core::hash::sha256_hex(&bytes),
        "{path}: the reported hash is not the hash of the file's bytes"
    );
    assert_eq!(record["size_bytes"], bytes.len() as u64, "{path}");
    bytes
}

/// The affinities the server read from Vina's score table.
fn affinities(result: &Value) -> Vec<f64> {
    result["reported"]["stdout"]["affinity"]
        .as_array()
        .unwrap_or_else(|| panic!("no reported.stdout.affinity: {result:#}"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[tokio::test]
async fn vina_docks_a_ligand_from_two_client_files_with_affinities_in_reported() {
    if !have(&["vina"]) {
        return;
    }
    let s = Server::start("vina").await;
    // Which vina runs is on record: the binary found on PATH, its hash and its version.
    let env = s.ok("get_environment", json!({})).await;
    let program = &env["programs"][0];
    let exe = program["executable"].as_str().unwrap();
    assert!(exe.ends_with("vina"), "{env:#}");
    let bytes = fs_err::read(exe).unwrap();
    assert_eq!(program["sha256"], scimcp_core::hash::sha256_hex(&bytes));
    let version = std::process::Command::new(exe)
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    assert!(
        version.contains(&format!("v{}", program["version"].as_str().unwrap())),
        "{version} vs {env:#}"
    );

    let ex = examples("vina");
    let receptor = s.give(&ex.join("receptor.pdbqt"), "receptor.pdbqt");
    let ligand = s.give(&ex.join("aspirin.pdbqt"), "ligand.pdbqt");

    let (validation, result) = s.run(dock_request(&receptor, &ligand, 20.8)).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    // Both client files are bound into the run by their hashes.
    for (id, file) in [("receptor", "receptor.pdbqt"), ("ligand", "aspirin.pdbqt")] {
        let recorded = result["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .unwrap_or_else(|| panic!("no input {id}: {result:#}"));
        let bytes = fs_err::read(ex.join(file)).unwrap();
        assert_eq!(
            recorded["files"][0]["sha256"],
            scimcp_core::hash::sha256_hex(&bytes),
            "{id}"
        );
    }
    let aspirin = affinities(&result);
    assert!(!aspirin.is_empty() && aspirin.len() <= 9, "{aspirin:?}");
    assert!(aspirin[0] < -1.0, "a real pose binds: {aspirin:?}");
    assert!(
        aspirin.windows(2).all(|w| w[0] <= w[1]),
        "best first: {aspirin:?}"
    );
    assert_eq!(
        result["reported"]["stdout"]["best_affinity"].as_f64(),
        Some(aspirin[0])
    );
    // The poses file agrees with the table: one MODEL per mode, the same affinities.
    let poses = String::from_utf8(artifact_bytes(&result, "poses.pdbqt")).unwrap();
    let remarks: Vec<f64> = poses
        .lines()
        .filter_map(|l| l.strip_prefix("REMARK VINA RESULT:"))
        .map(|rest| rest.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(remarks.len(), aspirin.len(), "{poses}");
    for (table, pose) in aspirin.iter().zip(&remarks) {
        assert!((table - pose).abs() < 0.001, "{aspirin:?} vs {remarks:?}");
    }
    let scores = String::from_utf8(artifact_bytes(&result, "scores.txt")).unwrap();
    assert!(scores.contains("affinity"), "{scores}");
    assert_eq!(result["validation_id"], validation["validation_id"]);

    // The ligand file's bytes change (aspirin → ibuprofen) at the same path: the request hash
    // and the validation id change with them, and so do the poses.
    s.give(&ex.join("ibuprofen.pdbqt"), "ligand.pdbqt");
    let (after, result2) = s.run(dock_request(&receptor, &ligand, 20.8)).await;
    assert_ne!(after["request_sha256"], validation["request_sha256"]);
    assert_ne!(after["validation_id"], validation["validation_id"]);
    assert_eq!(result2["state"], "succeeded", "{result2:#}");
    assert_ne!(affinities(&result2), aspirin);
    assert_ne!(result2["request_sha256"], result["request_sha256"]);

    // The same for the receptor: one more line in the file is another request.
    let mut bytes = fs_err::read(&receptor).unwrap();
    bytes.extend_from_slice(b"REMARK   edited by the client\n");
    fs_err::write(&receptor, bytes).unwrap();
    let edited = s
        .ok("validate_analysis", dock_request(&receptor, &ligand, 20.8))
        .await;
    assert_ne!(edited["request_sha256"], after["request_sha256"]);
    assert_ne!(edited["validation_id"], after["validation_id"]);
}

#[tokio::test]
async fn a_docking_campaign_of_ligands_by_seeds_binds_each_ligand_and_reports_each_affinity() {
    if !have(&["vina"]) {
        return;
    }
    let s = Server::start("vina").await;
    let ex = examples("vina");
    let receptor = s.give(&ex.join("receptor.pdbqt"), "receptor.pdbqt");
    let aspirin = s.give(&ex.join("aspirin.pdbqt"), "aspirin.pdbqt");
    let ibuprofen = s.give(&ex.join("ibuprofen.pdbqt"), "ibuprofen.pdbqt");
    // The campaign of docs/adapters/vina.md, at exhaustiveness 1 and two seeds.
    let grid = json!({"workflow": "dock", "max_concurrent": 2,
        "grid": {"inputs": {"receptor": [receptor], "ligand": [aspirin, ibuprofen]},
                 "vary": {"seed": [1, 2]},
                 "fixed": {"center_x": 20.8, "center_y": 78.4, "center_z": 66.2,
                           "size_x": 20, "size_y": 20, "size_z": 20, "exhaustiveness": 1}}});
    let mut preview = grid.clone();
    preview["confirm"] = json!(false);
    let shown = s.ok("start_campaign", preview).await;
    assert_eq!(shown["started"], false, "{shown:#}");
    assert_eq!(shown["items"], 4, "{shown:#}");
    assert_eq!(s.run_dirs(), 0, "a preview starts nothing");
    let started = s.ok("start_campaign", grid).await;
    assert_eq!(started["started"], true, "{started:#}");
    let campaign_id = started["campaign_id"].as_str().unwrap().to_string();
    let done = scimcp_e2e::harness::campaign_result_on(
        &s.session,
        &campaign_id,
        std::time::Duration::from_secs(600),
    )
    .await;
    assert_eq!(done["counts"]["succeeded"], 4, "{done:#}");
    // The summary table's column is the best affinity, read from each run's score table.
    let table = &done["table"];
    assert_eq!(
        table["columns"],
        json!(["stdout.best_affinity"]),
        "{done:#}"
    );
    let mut best_by_run = std::collections::BTreeMap::new();
    for row in table["rows"]["items"].as_array().unwrap() {
        best_by_run.insert(
            row["run_id"].as_str().unwrap().to_string(),
            row["values"][0].as_f64().unwrap(),
        );
    }
    let status = s
        .ok("get_campaign_status", json!({"campaign_id": campaign_id}))
        .await;
    let mut seen = Vec::new();
    for item in status["items"]["items"].as_array().unwrap() {
        let run_id = item["run_id"].as_str().unwrap();
        let result = s
            .ok("get_run_result", json!({"run_id": run_id, "wait_s": 0}))
            .await["result"]
            .clone();
        let ligand = result["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == "ligand")
            .unwrap()["files"][0]["sha256"]
            .as_str()
            .unwrap()
            .to_string();
        let best = affinities(&result)[0];
        assert!(best < -1.0, "{result:#}");
        assert_eq!(best_by_run.get(run_id), Some(&best), "{done:#}");
        seen.push(ligand);
    }
    seen.sort();
    let mut want: Vec<String> = [
        "aspirin.pdbqt",
        "aspirin.pdbqt",
        "ibuprofen.pdbqt",
        "ibuprofen.pdbqt",
    ]
    .iter()
    .map(|f| scimcp_core::hash::sha256_hex(&fs_err::read(ex.join(f)).unwrap()))
    .collect();
    want.sort();
    assert_eq!(seen, want, "each ligand twice, once per seed");
}

#[tokio::test]
async fn a_vina_box_far_from_the_receptor_fails_with_the_reason() {
    if !have(&["vina"]) {
        return;
    }
    let s = Server::start("vina").await;
    let ex = examples("vina");
    let receptor = s.give(&ex.join("receptor.pdbqt"), "receptor.pdbqt");
    let ligand = s.give(&ex.join("aspirin.pdbqt"), "aspirin.pdbqt");
    // 5,000 Å away: Vina itself exits 0 with affinities of about 0 kcal/mol.
    let (_, result) = s.run(dock_request(&receptor, &ligand, 5020.8)).await;
    assert_eq!(result["state"], "failed", "{result:#}");
    assert_eq!(result["exit_code"], 0, "{result:#}");
    assert_eq!(result["reason"], "success_predicate", "{result:#}");
    let message = result["message"].as_str().unwrap_or_default();
    assert!(message.contains("best_affinity"), "{message}");
    assert!(message.contains("search box"), "{message}");
    let best = result["reported"]["stdout"]["best_affinity"]
        .as_f64()
        .unwrap();
    assert!(best > -1.0, "{result:#}");
}

#[tokio::test]
async fn the_mafft_alignment_on_stdout_is_an_artifact_with_its_hash() {
    if !have(&["mafft"]) {
        return;
    }
    let s = Server::start("mafft").await;
    let fasta = s.give(
        &examples("mafft").join("ubiquitin-like.fasta"),
        "ubiquitin-like.fasta",
    );
    let (_, result) = s
        .run(json!({"workflow": "align", "inputs": {"sequences": fasta}, "parameters": {}}))
        .await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let alignment = artifact_bytes(&result, "alignment.fasta");
    // Exactly what MAFFT writes on stdout for the same arguments, typed by hand.
    let direct = std::process::Command::new("mafft")
        .args([
            "--thread",
            "1",
            "--auto",
            "--maxiterate",
            "0",
            "--op",
            "1.53",
            "--ep",
            "0.0",
            "--amino",
        ])
        .arg(&fasta)
        .output()
        .unwrap();
    assert!(direct.status.success());
    assert_eq!(
        String::from_utf8_lossy(&alignment),
        String::from_utf8_lossy(&direct.stdout)
    );
    let text = String::from_utf8(alignment).unwrap();
    assert!(
        text.contains("KEG----IPP"),
        "the insertion is aligned: {text}"
    );
    assert_eq!(
        result["reported"]["alignment"]["names"],
        json!(["ubq_ref", "ubq_var1", "ubq_var2", "ubq_var3", "ubq_var4"]),
        "{result:#}"
    );
}

/// A copy of a shipped manifest (and its schemas) in `dir`, edited by `edit`; its path.
fn edited_manifest(dir: &Path, adapter: &str, edit: impl FnOnce(String) -> String) -> String {
    let adapters = scimcp_e2e::workspace_root().join("adapters");
    let text = fs_err::read_to_string(adapters.join(format!("{adapter}.toml"))).unwrap();
    let edited = edit(text.clone());
    assert_ne!(edited, text, "the edit changed nothing");
    let schemas = adapters.join(adapter).join("schemas");
    fs_err::create_dir_all(dir.join(adapter).join("schemas")).unwrap();
    for entry in fs_err::read_dir(&schemas).unwrap().flatten() {
        fs_err::copy(
            entry.path(),
            dir.join(adapter).join("schemas").join(entry.file_name()),
        )
        .unwrap();
    }
    let path = dir.join(format!("{adapter}.toml"));
    fs_err::write(&path, edited).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn a_file_that_is_not_fasta_does_not_read_succeeded() {
    if !have(&["mafft"]) {
        return;
    }
    let s = Server::start("mafft").await;
    let bad = s.give(
        &examples("mafft").join("not-fasta.fasta"),
        "not-fasta.fasta",
    );
    // MAFFT exits 0 and writes nothing.
    let direct = std::process::Command::new("mafft")
        .args(["--auto", &bad])
        .output()
        .unwrap();
    assert!(direct.status.success() && direct.stdout.is_empty());
    let request = json!({"workflow": "align", "inputs": {"sequences": bad}, "parameters": {}});
    let (_, result) = s.run(request.clone()).await;
    // The shipped adapter reads MAFFT's own warning: failed, saying why.
    assert_eq!(result["state"], "failed", "{result:#}");
    assert_eq!(result["exit_code"], 0, "{result:#}");
    assert_eq!(result["reason"], "success_predicate", "{result:#}");
    let message = result["message"].as_str().unwrap_or_default();
    assert!(message.contains("no sequence"), "{message}");
    let alignment = &result["artifacts"]["items"][0];
    assert_eq!(
        (&alignment["path"], &alignment["size_bytes"]),
        (&json!("alignment.fasta"), &json!(0)),
        "{result:#}"
    );

    // Without that requirement, the empty required alignment alone keeps the run from
    // reading succeeded: partial_failure, naming the artifact.
    let dir = tempfile::tempdir().unwrap();
    let manifest = edited_manifest(dir.path(), "mafft", |text| {
        let cut = text.find("# MAFFT says so on stderr").unwrap();
        text[..cut].to_string()
    });
    let s = Server::start(&manifest).await;
    let bad = s.give(
        &examples("mafft").join("not-fasta.fasta"),
        "not-fasta.fasta",
    );
    let (_, result) = s
        .run(json!({"workflow": "align", "inputs": {"sequences": bad}, "parameters": {}}))
        .await;
    assert_eq!(result["state"], "partial_failure", "{result:#}");
    assert_eq!(result["exit_code"], 0, "{result:#}");
    let problems = result["problems"]["items"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p["id"] == "alignment" && p["problem"].as_str().unwrap().contains("empty")),
        "{result:#}"
    );
}

#[tokio::test]
async fn a_missing_vina_is_not_ready_with_the_remedy_and_starts_no_run() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = edited_manifest(dir.path(), "vina", |text| {
        text.replace(
            "executable = \"vina\"",
            "executable = \"vina-not-installed\"",
        )
    });
    let s = Server::start(&manifest).await;
    let caps = s.ok("get_capabilities", json!({})).await;
    assert_eq!(caps["runtime"]["ready"], false, "{caps:#}");
    let problem = caps["runtime"]["problem"].as_str().unwrap_or_default();
    assert!(problem.contains("vina-not-installed"), "{problem}");
    assert!(
        problem.contains("apt install autodock-vina"),
        "the remedy names the package: {problem}"
    );

    let ex = examples("vina");
    let receptor = s.give(&ex.join("receptor.pdbqt"), "receptor.pdbqt");
    let ligand = s.give(&ex.join("aspirin.pdbqt"), "aspirin.pdbqt");
    let request = dock_request(&receptor, &ligand, 20.8);
    let validation = s.ok("validate_analysis", request.clone()).await;
    assert_eq!(validation["ready"], false, "{validation:#}");
    let refused = s.err("start_analysis", request).await;
    assert!(
        refused.to_string().contains("vina-not-installed"),
        "{refused:#}"
    );
    assert_eq!(s.run_dirs(), 0, "no run was started");
}
