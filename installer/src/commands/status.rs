//! `status`: what is installed, active, provisioned and registered, and where.

use std::path::PathBuf;

use scimcp_core::install_state::SignatureRecord;
use serde::Serialize;

use super::{Setup, print_stdout};
use crate::error::SetupError;
use crate::register::{ClientStatus, status as client_status};

/// The `status` report.
#[derive(Debug, Serialize)]
pub struct Status {
    pub schema_version: u32,
    pub data_root: PathBuf,
    pub installed: bool,
    pub active: Option<String>,
    pub previous: Option<String>,
    /// The version `current` actually points at.
    pub current: Option<String>,
    pub versions: Vec<String>,
    /// How the active version's files were vouched for when they were unpacked (absent when
    /// the receipt has no record of it).
    pub active_signature: Option<SignatureRecord>,
    pub server_command: Option<Vec<String>>,
    /// The folders the server may read datasets from, and whether each is there.
    pub data_dirs: Vec<DataDirStatus>,
    pub runtimes: Vec<RuntimeStatus>,
    pub clients: Vec<ClientStatus>,
    pub runs_dir: PathBuf,
}

#[derive(Debug, Serialize)]
pub struct DataDirStatus {
    pub path: PathBuf,
    pub present: bool,
}

#[derive(Debug, Serialize)]
pub struct RuntimeStatus {
    pub adapter: String,
    pub interpreter: PathBuf,
    pub present: bool,
    pub python: String,
    pub package_sha256: Option<String>,
}

pub fn run(setup: &Setup) -> Result<i32, SetupError> {
    let state = setup.load_state()?;
    let server = setup.server(&state);
    let cx = setup.client_context();
    let recorded: Vec<String> = state.clients.keys().cloned().collect();
    let clients = setup
        .select(&recorded)?
        .into_iter()
        .map(|c| client_status(cx, &server, c))
        .collect();
    let status = Status {
        schema_version: 1,
        data_root: setup.layout.root.clone(),
        installed: state.active.is_some(),
        active: state.active.clone(),
        previous: state.previous.clone(),
        current: crate::current::read(&setup.layout).map(|v| v.to_string()),
        versions: state.versions.keys().cloned().collect(),
        active_signature: state
            .active
            .as_ref()
            .and_then(|v| state.versions.get(v))
            .and_then(|r| r.signature.clone()),
        server_command: state.server.as_ref().map(|s| {
            std::iter::once(s.command.display().to_string())
                .chain(s.args.iter().cloned())
                .collect()
        }),
        data_dirs: setup
            .data_dirs(&state)
            .into_iter()
            .map(|path| DataDirStatus {
                present: path.is_dir(),
                path,
            })
            .collect(),
        runtimes: state
            .runtimes
            .iter()
            .map(|(a, r)| RuntimeStatus {
                adapter: a.clone(),
                interpreter: r.interpreter.clone(),
                present: r.interpreter.is_file(),
                python: r.python_version.clone(),
                package_sha256: r.package.as_ref().and_then(|p| p.sha256.clone()),
            })
            .collect(),
        clients,
        runs_dir: setup.layout.runs_dir(),
    };
    if setup.json {
        print_stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&status).expect("JSON")
        ));
    } else {
        print_stdout(&human(&status));
    }
    Ok(0)
}

fn human(s: &Status) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "data directory  {}", s.data_root.display());
    if !s.installed {
        let _ = writeln!(
            out,
            "scimcp is not installed here (run `scimcp-setup install`)"
        );
    }
    let _ = writeln!(
        out,
        "active version  {}{}",
        s.active.as_deref().unwrap_or("-"),
        match (&s.current, &s.active) {
            (c, a) if c == a => String::new(),
            (c, _) => format!(
                "  (but current points at {}: run repair)",
                c.as_deref().unwrap_or("nothing")
            ),
        }
    );
    if s.active.is_some() {
        let _ = writeln!(
            out,
            "signature       {}",
            s.active_signature.as_ref().map_or_else(
                || "not recorded (installed before signatures were checked; reinstall from a signed bundle to record one)".to_owned(),
                |sig| format!("{}: {}", sig.status.as_str(), sig.detail)
            )
        );
    }
    let _ = writeln!(
        out,
        "previous        {}",
        s.previous.as_deref().unwrap_or("-")
    );
    if let Some(cmd) = &s.server_command {
        let _ = writeln!(out, "server command  {}", cmd.join(" "));
    }
    for r in &s.runtimes {
        let _ = writeln!(
            out,
            "runtime         {}: Python {} at {}{}",
            r.adapter,
            r.python,
            r.interpreter.display(),
            if r.present {
                ""
            } else {
                "  (missing: run repair)"
            }
        );
    }
    for d in &s.data_dirs {
        let _ = writeln!(
            out,
            "data folder     {}{}",
            d.path.display(),
            if d.present {
                ""
            } else {
                "  (missing: run repair, or create it)"
            }
        );
    }
    let _ = writeln!(out, "runs            {}", s.runs_dir.display());
    let _ = writeln!(out);
    out.push_str(&super::clients::table(&s.clients));
    out
}
