//! `clients`: every known client, whether it is detected, where its file is, and whether
//! scimcp's entries there (each adapter's, each remote server's) are present and healthy.

use super::report::print_stdout;
use super::setup::Setup;
use crate::error::SetupError;
use crate::register::{ClientStatus, remote_status, status};
use crate::remote_server::RemoteServer;
use scimcp_core::install_state::entry_name;

pub fn run(setup: &Setup) -> Result<(), SetupError> {
    let state = setup.load_state()?;
    let mut list: Vec<ClientStatus> = Vec::new();
    for adapter in setup.shown_adapters(&state)? {
        let server = setup.adapter_server(&state, &adapter);
        let record = state.adapters.get(&adapter);
        for client in crate::clients::all() {
            let client_record = record.and_then(|a| a.clients.get(client.id()));
            let entry = client_record.map_or_else(|| entry_name(&adapter), |r| r.name.clone());
            let project = setup.recorded_project(client, client_record, false);
            let cx = setup.context_in(project.as_deref());
            list.push(status(cx, &adapter, &entry, &server, client));
        }
    }
    if setup.adapters.is_empty() {
        for (name, record) in &state.remotes {
            let remote = RemoteServer::from_record(name, record);
            for client in crate::clients::all() {
                let project =
                    setup.recorded_project(client, record.clients.get(client.id()), false);
                let cx = setup.context_in(project.as_deref());
                list.push(remote_status(cx, &remote, client));
            }
        }
    }
    if setup.json {
        let doc = serde_json::json!({ "schema_version": 1, "clients": list });
        print_stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).expect("JSON")
        ));
    } else {
        print_stdout(&table(&list));
    }
    Ok(())
}

/// A fixed-width table of client statuses.
pub fn table(list: &[ClientStatus]) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "{:<20} {:<24} {:<9} {:<11} {:<8} {}\n",
        "CLIENT", "ENTRY", "DETECTED", "REGISTERED", "HEALTHY", "LOCATION"
    );
    for c in list {
        let yes = |b: bool| if b { "yes" } else { "no" };
        let location = match (&c.path, c.method) {
            (Some(p), _) => p.display().to_string(),
            (None, "project") => "(needs --project DIR)".to_string(),
            (None, _) => "(settings UI only)".to_string(),
        };
        let _ = writeln!(
            out,
            "{:<20} {:<24} {:<9} {:<11} {:<8} {}{}",
            c.id,
            c.entry,
            yes(c.detected),
            yes(c.registered),
            if c.registered { yes(c.healthy) } else { "-" },
            location,
            c.problem
                .as_ref()
                .map_or_else(String::new, |p| format!("  ({p})"))
        );
    }
    out
}
