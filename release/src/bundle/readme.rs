//! `README.txt` at the top of every bundle: what the folder is, the one command that installs
//! it, and how to undo it, for someone who just unpacked a download and has no other page open.
//! Plain text (not Markdown) because it is opened by double-clicking, in Notepad as often as in
//! a terminal.

/// The README for the bundle of `version` for `target`, whose folder is `folder`.
pub fn readme(version: &str, target: &str, folder: &str) -> String {
    let windows = target.contains("windows");
    let (setup, shell) = if windows {
        (r".\bin\scimcp-setup.exe", "PowerShell")
    } else {
        ("./bin/scimcp-setup", "a terminal")
    };
    format!(
        "scimcp {version} for {target}
{rule}

scimcp lets your AI apps (Claude Desktop, Claude Code, Cursor, VS Code, Codex,
Gemini CLI, ...) run a scientific command-line program safely: every request is
checked before anything runs, each analysis runs in its own folder, and every
result comes back with the SHA-256 of each file it wrote.

This folder holds the programs (bin/), the adapters that connect scientific
tools to scimcp (adapters/), the reference scientific tool (refsci/) and
RELEASE.json (the size and SHA-256 of every file here).

INSTALL: open {shell} in this folder,
{folder}, and run

    {setup} install

It copies scimcp into your own scimcp folder (no administrator rights), sets up
the scientific Python environment, makes a data folder for your files
(scimcp in your Documents folder, or in your home folder) and registers scimcp
in every AI app it finds, backing up every settings file first. Then quit and
reopen your AI apps. Check it at any time with `{setup} status`.

To have this download's signature checked first, keep the .zip and its
.sigstore.json side by side and run instead

    {setup} install --from ../{folder}.zip

UNDO: `{setup} uninstall` removes scimcp's entries from every app, the
programs and the Python environment; your runs, results and data folder are
kept.

More: https://github.com/scimcp/scimcp/blob/main/docs/INSTALL.md
",
        rule = "=".repeat(format!("scimcp {version} for {target}").len()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_names_the_command_for_the_target_and_how_to_undo_it() {
        let unix = readme(
            "1.2.3",
            "x86_64-unknown-linux-gnu",
            "scimcp-1.2.3-x86_64-unknown-linux-gnu",
        );
        assert!(unix.contains("    ./bin/scimcp-setup install\n"), "{unix}");
        assert!(unix.contains("./bin/scimcp-setup uninstall"), "{unix}");
        assert!(
            unix.contains("--from ../scimcp-1.2.3-x86_64-unknown-linux-gnu.zip"),
            "{unix}"
        );
        let windows = readme(
            "1.2.3",
            "x86_64-pc-windows-msvc",
            "scimcp-1.2.3-x86_64-pc-windows-msvc",
        );
        assert!(
            windows.contains(r"    .\bin\scimcp-setup.exe install"),
            "{windows}"
        );
        assert!(windows.contains("PowerShell"), "{windows}");
        assert!(!windows.contains("./bin/"), "{windows}");
    }
}
