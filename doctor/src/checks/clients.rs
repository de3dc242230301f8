//! `client.<id>`: for every adapter and every client detected on this computer or recorded
//! for the adapter in the receipt, the configuration file parses, holds the adapter's entry
//! (`scimcp-<adapter>`), the entry's command exists and is executable, and its arguments name
//! that adapter. An entry that still points into a removed version (a stale copy from an old
//! install), or that an older scimcp wrote under the name `scimcp`, is reported as such.

use std::path::{Path, PathBuf};

use scimcp_setup_model::clients::{Client, ClientContext};
use serde_json::Value as Json;

use crate::check::{CheckResult, Status, shell_quote};
use crate::context::{Context, adapter_of};

pub fn check(ctx: &Context, id: &str, adapter: &str, client: &'static dyn Client) -> CheckResult {
    let cx = ClientContext {
        host: &ctx.host,
        layout: &ctx.layout,
        project: None,
    };
    let server = ctx.server(adapter);
    let recorded = ctx.record(adapter).and_then(|a| a.clients.get(client.id()));
    let desired = scimcp_core::install_state::entry_name(adapter);
    let name = recorded.map_or_else(|| desired.clone(), |r| r.name.clone());
    // A project entry (`P/.mcp.json`) is checked where the receipt says it was written.
    let project = recorded.and_then(|r| {
        scimcp_setup_model::clients::recorded_project(client, cx, &r.name, &r.location)
    });
    let cx = ClientContext {
        project: project.as_deref(),
        ..cx
    };
    let repair = format!("scimcp-setup repair --client {}", client.id());
    let Some(file) = client.file(cx, &name) else {
        return CheckResult::skipped(
            id,
            format!(
                "{} is configured in its settings UI; the doctor cannot read it",
                client.name()
            ),
        );
    };
    let path = &file.path;
    let not_there = |what: &str| {
        if recorded.is_some() {
            CheckResult::fail(
                id,
                format!("{what}, but scimcp registered itself there at setup"),
            )
            .remedy(repair.clone())
            .fixable()
        } else {
            CheckResult::warn(
                id,
                format!(
                    "{} is installed but scimcp is not registered in it",
                    client.name()
                ),
            )
            .remedy(format!("scimcp-setup install --client {}", client.id()))
            .fixable()
        }
    };
    // Only a regular file (or a link to one) of at most 16 MiB is read: a FIFO, a device or
    // a huge file is reported, never waited on or loaded.
    let text = match scimcp_core::fs::read_regular(path, scimcp_core::fs::CONFIG_READ_LIMIT) {
        Ok(Some(bytes)) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                return CheckResult::fail(id, format!("{} is not UTF-8 text", path.display()))
                    .remedy(restore(ctx, client, path));
            }
        },
        Ok(None) => {
            return not_there(&format!("{} does not exist", path.display()));
        }
        Err(e @ scimcp_core::fs::ReadError::Io { .. }) => {
            return CheckResult::fail(id, e.to_string()).remedy(format!(
                "make {} readable by you (ls -l shows its owner and mode)",
                shell_quote(&path.display().to_string())
            ));
        }
        Err(e) => {
            return CheckResult::fail(id, e.to_string()).remedy(format!(
                "put {}'s real configuration file at {} (or remove what is there), then run {repair}",
                client.name(),
                shell_quote(&path.display().to_string())
            ));
        }
    };
    let entry = match file.format.read(&text, file.slot(&name)) {
        Ok(Some(entry)) => entry,
        Ok(None) => return not_there(&format!("{} has no `{name}` entry", path.display())),
        Err(scimcp_setup_model::edit::EditError::Duplicate {
            key,
            line,
            column,
            first_line,
        }) => {
            return CheckResult::fail(
                id,
                format!(
                    "{}:{line}:{column}: the key \"{key}\" appears a second time (first on line \
                     {first_line}); clients disagree on which one counts",
                    path.display()
                ),
            )
            .remedy(format!(
                "merge the two \"{key}\" blocks of {} into one, then run {repair}",
                shell_quote(&path.display().to_string())
            ));
        }
        Err(e) => {
            // The installer never overwrites a file that does not parse, so repair cannot
            // fix this: the remedy is the backup, or the user's own edit.
            return CheckResult::fail(id, format!("{} does not parse: {e}", path.display()))
                .remedy(restore(ctx, client, path));
        }
    };
    let expected = client.entry(&name, &server).to_json();
    let Some((command, args)) = command_of(&entry) else {
        return CheckResult::fail(
            id,
            format!("the `{name}` entry in {} names no command", path.display()),
        )
        .remedy(repair)
        .fixable();
    };
    let mut problems = command_problems(ctx, &command);
    match adapter_of(&args) {
        None => problems.push((Status::Fail, "its arguments name no adapter".to_string())),
        Some(a) if !known_adapter(ctx, &a) => {
            problems.push((
                Status::Fail,
                format!("its arguments name an unknown adapter {a:?}"),
            ));
        }
        Some(a)
            if scimcp_setup_model::adapters::adapter_name(&a)
                .ok()
                .as_deref()
                != Some(adapter) =>
        {
            problems.push((
                Status::Fail,
                format!("its arguments name the adapter {a:?}, not {adapter}"),
            ));
        }
        Some(_) => {}
    }
    if name != desired {
        problems.push((
            Status::Warn,
            format!(
                "the entry has the name `{name}` an older scimcp gave it; repair renames it \
                 `{desired}` (one entry per adapter)"
            ),
        ));
    }
    if problems.is_empty() && entry != expected {
        problems.push((
            Status::Warn,
            format!(
                "the entry differs from what scimcp writes (it runs {})",
                command.display()
            ),
        ));
    }
    CheckResult::from_problems(
        id,
        format!(
            "{}: runs {} {}",
            path.display(),
            command.display(),
            args.join(" ")
        ),
        problems,
    )
    .remedy(repair)
    .fixable()
}

/// What is wrong with an entry's command: a removed version, a missing or non-executable file.
fn command_problems(ctx: &Context, command: &Path) -> Vec<(Status, String)> {
    let versions = ctx.layout.versions_dir();
    if let Ok(rest) = command.strip_prefix(&versions)
        && let Some(version) = rest.components().next()
    {
        let version = version.as_os_str().to_string_lossy().into_owned();
        if !versions.join(&version).is_dir() {
            return vec![(
                Status::Fail,
                format!(
                    "stale entry: it runs {} from the removed version {version}",
                    command.display()
                ),
            )];
        }
        let active = ctx
            .state
            .as_ref()
            .ok()
            .and_then(Option::as_ref)
            .and_then(|s| s.active.clone());
        if active.as_deref() != Some(version.as_str()) {
            return vec![(
                Status::Warn,
                format!(
                    "the entry is pinned to version {version} instead of the active one (it \
                     will not follow upgrades)"
                ),
            )];
        }
    }
    if !command.exists() {
        return vec![(
            Status::Fail,
            format!("its command {} does not exist", command.display()),
        )];
    }
    if !scimcp_setup_model::host::is_executable(command) {
        return vec![(
            Status::Fail,
            format!("its command {} is not executable", command.display()),
        )];
    }
    Vec::new()
}

/// Whether the server would find `adapter`: embedded, shipped with the active version, or a
/// manifest file path.
fn known_adapter(ctx: &Context, adapter: &str) -> bool {
    scimcp_core::manifest::load_embedded(adapter).is_some()
        || ctx
            .layout
            .current()
            .join("adapters")
            .join(format!("{adapter}.toml"))
            .is_file()
        || Path::new(adapter).is_file()
}

/// The restore command for a damaged client file: its newest scimcp backup, if any.
fn restore(ctx: &Context, client: &dyn Client, path: &Path) -> String {
    match scimcp_setup_model::backup::latest(&ctx.layout.backups_dir(), client.id(), path) {
        Some(backup) => format!(
            "cp {} {}",
            shell_quote(&backup.display().to_string()),
            shell_quote(&path.display().to_string())
        ),
        None => format!(
            "fix the syntax of {} by hand (scimcp has no backup of it), then run scimcp-setup repair --client {}",
            shell_quote(&path.display().to_string()),
            client.id()
        ),
    }
}

/// The command and arguments of an entry in any client's dialect: `command` + `args`
/// (most clients), `cmd` + `args` (Goose), `command` as an argv list (OpenCode),
/// `command: {path, args}` (older Zed), or nested one level down (Continue's block).
pub fn command_of(entry: &Json) -> Option<(PathBuf, Vec<String>)> {
    let strings = |v: Option<&Json>| -> Vec<String> {
        v.and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let obj = entry.as_object()?;
    match obj.get("command").or_else(|| obj.get("cmd")) {
        Some(Json::String(c)) => return Some((PathBuf::from(c), strings(obj.get("args")))),
        Some(Json::Array(argv)) => {
            let mut argv = argv.iter().filter_map(|s| s.as_str().map(String::from));
            let first = argv.next()?;
            return Some((PathBuf::from(first), argv.collect()));
        }
        Some(Json::Object(inner)) => {
            let path = inner.get("path")?.as_str()?;
            return Some((PathBuf::from(path), strings(inner.get("args"))));
        }
        _ => {}
    }
    obj.values().find_map(|v| match v {
        Json::Array(items) => items.iter().find_map(command_of),
        Json::Object(_) => command_of(v),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_command_of_every_dialect() {
        let want = (
            PathBuf::from("/x/scimcp"),
            vec!["serve".to_string(), "--adapter".into(), "refsci".into()],
        );
        for entry in [
            json!({"command": "/x/scimcp", "args": ["serve", "--adapter", "refsci"]}),
            json!({"type": "stdio", "cmd": "/x/scimcp", "args": ["serve", "--adapter", "refsci"]}),
            json!({"type": "local", "command": ["/x/scimcp", "serve", "--adapter", "refsci"]}),
            json!({"command": {"path": "/x/scimcp", "args": ["serve", "--adapter", "refsci"]}}),
            json!({"name": "scimcp", "mcpServers": [{"name": "scimcp", "command": "/x/scimcp", "args": ["serve", "--adapter", "refsci"]}]}),
        ] {
            assert_eq!(command_of(&entry), Some(want.clone()), "{entry}");
        }
        assert_eq!(command_of(&json!({"url": "http://x"})), None);
    }
}
