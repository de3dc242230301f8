//! The git facts a tag needs: a clean checkout, and annotated tags at HEAD.

use std::path::Path;
use std::process::Command;

/// Run git in `repo`, returning stdout, or the trimmed stderr as the error.
pub fn git(repo: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Nothing modified, staged or untracked.
pub fn clean_checkout(repo: &Path) -> Result<String, String> {
    let status = git(repo, &["status", "--porcelain", "--untracked-files=all"])?;
    if status.is_empty() {
        return Ok("no modified, staged or untracked files".into());
    }
    let first: Vec<&str> = status.lines().take(5).collect();
    Err(format!(
        "the checkout is not clean ({} entries, e.g. {}); commit or remove them, then run the preflight again",
        status.lines().count(),
        first.join("; ")
    ))
}

/// The release tag must exist, be annotated, and point at HEAD.
pub fn tag_at_head(repo: &Path, tag: &str) -> Result<String, String> {
    let head = git(repo, &["rev-parse", "HEAD"])?;
    let Ok(kind) = git(repo, &["cat-file", "-t", &format!("refs/tags/{tag}")]) else {
        return Err(format!(
            "there is no tag {tag}; create it with: git tag -a {tag} -m \"scimcp {}\"",
            tag.trim_start_matches('v')
        ));
    };
    if kind != "tag" {
        return Err(format!(
            "{tag} is a lightweight tag ({kind}); releases need an annotated tag: git tag -d {tag} && git tag -a {tag} -m \"scimcp {}\"",
            tag.trim_start_matches('v')
        ));
    }
    let target = git(repo, &["rev-parse", &format!("{tag}^{{commit}}")])?;
    if target != head {
        return Err(format!(
            "{tag} points at {target}, not at HEAD {head}; tag the commit you release (or check it out)"
        ));
    }
    Ok(format!(
        "{tag} is annotated and points at HEAD {}",
        &head[..12.min(head.len())]
    ))
}
