//! `clients`: every known client, whether it is detected, where its file is, and whether
//! scimcp's entry there is present and healthy.

use super::{Setup, print_stdout};
use crate::error::SetupError;
use crate::register::{ClientStatus, status};

pub fn run(setup: &Setup) -> Result<(), SetupError> {
    let server = setup.server(&setup.load_state()?);
    let cx = setup.client_context();
    let list: Vec<ClientStatus> = crate::clients::all()
        .into_iter()
        .map(|c| status(cx, &server, c))
        .collect();
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
        "{:<20} {:<9} {:<11} {:<8} {}\n",
        "CLIENT", "DETECTED", "REGISTERED", "HEALTHY", "LOCATION"
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
            "{:<20} {:<9} {:<11} {:<8} {}{}",
            c.id,
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
