//! `status`: what is installed, active, provisioned and registered (local adapters and
//! remote servers), and where.

use std::path::PathBuf;

use scimcp_core::install_state::{AdapterSource, PackageSources, SignatureRecord};
use serde::Serialize;

use super::report::print_stdout;
use super::setup::Setup;
use crate::error::SetupError;
use crate::register::{ClientStatus, remote_status, status as client_status};
use crate::remote_server::RemoteServer;
use scimcp_core::install_state::entry_name;

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
    /// Every installed adapter (or the ones named with --adapter).
    pub adapters: Vec<AdapterStatus>,
    /// The folders the server may read datasets from, and whether each is there.
    pub data_dirs: Vec<DataDirStatus>,
    pub runtimes: Vec<RuntimeStatus>,
    /// Every remote server registered (`install --remote`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remotes: Vec<RemoteStatus>,
    pub clients: Vec<ClientStatus>,
    pub runs_dir: PathBuf,
}

#[derive(Debug, Serialize)]
pub struct AdapterStatus {
    pub name: String,
    pub installed: bool,
    /// `shipped` or `file`.
    pub source: String,
    /// The manifest file the user named (file adapters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<PathBuf>,
    /// Its entry's name in every client.
    pub entry: String,
    /// The command its entries run.
    pub server_command: Option<Vec<String>>,
    #[serde(skip_serializing_if = "PackageSources::is_default")]
    pub packages: PackageSources,
}

/// A registered remote server.
#[derive(Debug, Serialize)]
pub struct RemoteStatus {
    /// Its entry's name in every client.
    pub name: String,
    pub url: String,
    /// The environment variable the clients read the token from (absent: no token).
    pub token_env: Option<String>,
    /// Whether that variable is set in the environment `status` runs in (a client started
    /// elsewhere may see another one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_set: Option<bool>,
    /// The clients it is registered in.
    pub clients: Vec<String>,
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
    /// The interpreter it was built from, where it was found and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<scimcp_core::install_state::BaseInterpreter>,
}

pub fn run(setup: &Setup) -> Result<i32, SetupError> {
    let state = setup.load_state()?;
    let names = setup.shown_adapters(&state)?;
    let mut clients = Vec::new();
    let mut adapters = Vec::new();
    for name in &names {
        let record = state.adapters.get(name);
        let server = setup.adapter_server(&state, name);
        let recorded: Vec<String> = record
            .map(|a| a.clients.keys().cloned().collect())
            .unwrap_or_default();
        for client in setup.select(&recorded)? {
            let client_record = record.and_then(|a| a.clients.get(client.id()));
            let entry = client_record.map_or_else(|| entry_name(name), |r| r.name.clone());
            // A project entry is shown where it was written, without --project.
            let project = setup.recorded_project(client, client_record, false);
            let cx = setup.context_in(project.as_deref());
            clients.push(client_status(cx, name, &entry, &server, client));
        }
        let (source, original) = match record.map(|a| &a.source) {
            Some(AdapterSource::File { original, .. }) => ("file", Some(original.clone())),
            _ => ("shipped", None),
        };
        adapters.push(AdapterStatus {
            name: name.clone(),
            installed: record.is_some(),
            source: source.into(),
            original,
            entry: entry_name(name),
            server_command: record.and_then(|a| a.server.as_ref()).map(|s| {
                std::iter::once(s.command.display().to_string())
                    .chain(s.args.iter().cloned())
                    .collect()
            }),
            packages: record.map(|a| a.packages.clone()).unwrap_or_default(),
        });
    }
    let mut remotes = Vec::new();
    if setup.adapters.is_empty() {
        for (name, record) in &state.remotes {
            let remote = RemoteServer::from_record(name, record);
            let recorded: Vec<String> = record.clients.keys().cloned().collect();
            for client in setup.select(&recorded)? {
                let project =
                    setup.recorded_project(client, record.clients.get(client.id()), false);
                let cx = setup.context_in(project.as_deref());
                clients.push(remote_status(cx, &remote, client));
            }
            remotes.push(RemoteStatus {
                name: name.clone(),
                url: remote.shown_url(),
                token_env: record.token_env.clone(),
                token_set: record
                    .token_env
                    .as_deref()
                    .map(|v| setup.host.var(v).is_some_and(|t| !t.is_empty())),
                clients: recorded,
            });
        }
    }
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
        adapters,
        // Data folders belong to local adapters; a computer with only remote servers has none.
        data_dirs: (if names.is_empty() {
            Vec::new()
        } else {
            setup.data_dirs(&state)
        })
        .into_iter()
        .map(|path| DataDirStatus {
            present: path.is_dir(),
            path,
        })
        .collect(),
        runtimes: state
            .runtimes
            .iter()
            .filter(|(a, _)| names.contains(a))
            .map(|(a, r)| RuntimeStatus {
                adapter: a.clone(),
                interpreter: r.interpreter.clone(),
                present: r.interpreter.is_file(),
                python: r.python_version.clone(),
                package_sha256: r.package.as_ref().and_then(|p| p.sha256.clone()),
                base: r.base.clone(),
            })
            .collect(),
        remotes,
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
    if !s.installed && s.remotes.is_empty() {
        let _ = writeln!(
            out,
            "scimcp is not installed here (run `scimcp-setup install`)"
        );
    } else if !s.installed {
        let _ = writeln!(
            out,
            "nothing is installed locally: remote servers only (`scimcp-setup install` adds a \
             local one)"
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
    for a in &s.adapters {
        let _ = writeln!(
            out,
            "adapter         {}{}{}",
            a.name,
            match &a.original {
                Some(path) => format!(" (from {})", path.display()),
                None => String::new(),
            },
            if a.installed {
                format!(", entry `{}` in the clients", a.entry)
            } else {
                " (not installed)".to_string()
            }
        );
        if let Some(cmd) = &a.server_command {
            let _ = writeln!(out, "  command       {}", cmd.join(" "));
        }
        for r in s.runtimes.iter().filter(|r| r.adapter == a.name) {
            let _ = writeln!(
                out,
                "  runtime       Python {} at {}{}",
                r.python,
                r.interpreter.display(),
                if r.present {
                    ""
                } else {
                    "  (missing: run repair)"
                }
            );
            if let Some(base) = &r.base {
                let _ = writeln!(
                    out,
                    "  built from    {} ({})",
                    base.path.display(),
                    base.found_by
                );
            }
        }
        let p = &a.packages;
        for dir in &p.find_links {
            let _ = writeln!(out, "  wheelhouse    {}", dir.display());
        }
        if let Some(url) = &p.index_url {
            let _ = writeln!(out, "  index         {url}");
        }
        if p.no_index {
            let _ = writeln!(out, "  index         none (--no-index)");
        }
    }
    for r in &s.remotes {
        let token = match (&r.token_env, r.token_set) {
            (Some(var), Some(true)) => format!("token from ${var} (set here)"),
            (Some(var), _) => format!("token from ${var} (NOT set in this environment)"),
            (None, _) => "no token".to_string(),
        };
        let _ = writeln!(out, "remote          {}  {}  {token}", r.name, r.url);
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
