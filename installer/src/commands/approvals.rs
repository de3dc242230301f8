//! What each client still needs, after scimcp's entry is in its file, before the model can
//! call scimcp's tools: a project entry's approval, and the permission a one-shot (`-p`)
//! session needs. Measured with the real clients (notes/real-clients.md) except where the
//! text says it follows the client's documentation.

use std::path::Path;

use super::report::{ClientReport, Report};
use crate::register::Outcome;

/// One note per registered client that needs something, in the report's order.
pub fn notes(report: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    for line in report.clients.iter().filter(|c| registered(c)) {
        if let Some(note) = note(line)
            && !notes.contains(&note)
        {
            notes.push(note);
        }
    }
    notes
}

fn registered(line: &ClientReport) -> bool {
    line.error.is_none()
        && matches!(
            line.outcome,
            Some(Outcome::Added | Outcome::Replaced | Outcome::Unchanged)
        )
}

/// The folder of a project file (`P/.mcp.json`, `P/.vscode/mcp.json`) for messages.
fn project_of(location: &str, depth: usize) -> String {
    Path::new(location)
        .ancestors()
        .nth(depth)
        .map_or_else(|| location.to_string(), |p| p.display().to_string())
}

fn note(line: &ClientReport) -> Option<String> {
    let entry = &line.entry;
    Some(match line.id {
        "claude-code-project" => format!(
            "Claude Code starts a project's servers only after you approve them: open Claude \
             Code in {} and accept {entry} (until then `claude mcp list` shows it as \"Pending \
             approval\"). In a one-shot session (`claude -p`) Claude Code runs MCP tools only \
             when they are allowed: add --allowedTools 'mcp__{entry}__*'.",
            project_of(&line.location, 1)
        ),
        "claude-code" => format!(
            "Claude Code asks before it runs a tool of {entry} in an interactive session; a \
             one-shot session (`claude -p`) has nobody to ask and refuses them unless you add \
             --allowedTools 'mcp__{entry}__*'."
        ),
        "gemini" => format!(
            "Gemini CLI hands {entry}'s tools to a one-shot session (`gemini -p`) only with \
             --approval-mode yolo, in a folder you trusted; interactive sessions ask before \
             each call."
        ),
        "qwen-code" => format!(
            "Qwen Code asks before each call of {entry}'s tools; for a one-shot session \
             (`qwen -p`) add --approval-mode yolo (its documented way to approve all tools)."
        ),
        "copilot-cli" => format!(
            "GitHub Copilot CLI asks before it runs a tool; a one-shot session (`copilot -p`) \
             needs --allow-tool '{entry}' (that server's tools) or --allow-all-tools."
        ),
        "vscode-workspace" => format!(
            "VS Code asks you to trust {entry} from {} the first time it starts it (its \
             documented behaviour for workspace servers).",
            project_of(&line.location, 2)
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &'static str, location: &str, outcome: Outcome) -> ClientReport {
        ClientReport {
            id,
            name: id,
            adapter: "refsci".into(),
            remote: None,
            entry: "scimcp-refsci".into(),
            location: location.into(),
            outcome: Some(outcome),
            error: None,
            manual_steps: None,
        }
    }

    #[test]
    fn says_how_each_registered_client_approves_scimcp() {
        let report = Report {
            clients: vec![
                line("claude-code-project", "/p/proj/.mcp.json", Outcome::Added),
                line("gemini", "/h/.gemini/settings.json", Outcome::Unchanged),
                line("copilot-cli", "/h/.copilot/mcp-config.json", Outcome::Added),
                line("cursor", "/h/.cursor/mcp.json", Outcome::Added),
                line("qwen-code", "/h/.qwen/settings.json", Outcome::Removed),
            ],
            ..Report::default()
        };
        let notes = notes(&report);
        assert_eq!(notes.len(), 3, "{notes:#?}");
        assert!(
            notes[0].contains("open Claude Code in /p/proj"),
            "{}",
            notes[0]
        );
        assert!(notes[0].contains("Pending approval"), "{}", notes[0]);
        assert!(notes[0].contains("--allowedTools 'mcp__scimcp-refsci__*'"));
        assert!(notes[1].contains("--approval-mode yolo"));
        assert!(notes[2].contains("--allow-tool 'scimcp-refsci'"));
    }
}
