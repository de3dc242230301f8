//! The git facts a tag needs: a clean checkout, and annotated tags at HEAD.

use std::path::Path;
use std::process::Command;

use super::command;
use super::error::StepError;
use crate::child;

/// Run git in `repo` (within [`child::GIT`]), returning stdout, or the trimmed stderr as the
/// error.
pub fn git(repo: &Path, args: &[&str]) -> Result<String, StepError> {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(repo).args(args);
    let out = command::start(&format!("git {}", args.join(" ")), cmd, child::GIT)?;
    if out.success() {
        Ok(out.stdout.trim().to_string())
    } else {
        Err(StepError::Git {
            args: args.join(" "),
            stderr: out.stderr.trim().to_string(),
        })
    }
}

/// Nothing modified, staged or untracked.
pub fn clean_checkout(repo: &Path) -> Result<String, StepError> {
    let status = git(repo, &["status", "--porcelain", "--untracked-files=all"])?;
    if status.is_empty() {
        return Ok("no modified, staged or untracked files".into());
    }
    let first: Vec<&str> = status.lines().take(5).collect();
    Err(StepError::DirtyCheckout {
        count: status.lines().count(),
        first: first.join("; "),
    })
}

/// The release tag must exist, be annotated, and point at HEAD.
pub fn tag_at_head(repo: &Path, tag: &str) -> Result<String, StepError> {
    let head = git(repo, &["rev-parse", "HEAD"])?;
    let Ok(kind) = git(repo, &["cat-file", "-t", &format!("refs/tags/{tag}")]) else {
        return Err(StepError::NoTag { tag: tag.into() });
    };
    if kind != "tag" {
        return Err(StepError::LightweightTag {
            tag: tag.into(),
            kind,
        });
    }
    let target = git(repo, &["rev-parse", &format!("{tag}^{{commit}}")])?;
    if target != head {
        return Err(StepError::TagNotAtHead {
            tag: tag.into(),
            target,
            head,
        });
    }
    Ok(format!(
        "{tag} is annotated and points at HEAD {}",
        &head[..12.min(head.len())]
    ))
}
