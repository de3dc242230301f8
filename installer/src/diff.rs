//! Unified diffs for `--dry-run`: exactly what each file would become.

use std::path::Path;

use similar::TextDiff;

/// A unified diff of `before` → `after` for `path` (`None` means the file is absent).
pub fn unified(path: &Path, before: Option<&str>, after: Option<&str>) -> String {
    let name = path.display().to_string();
    let old_name = if before.is_some() {
        name.as_str()
    } else {
        "/dev/null"
    };
    let new_name = if after.is_some() {
        name.as_str()
    } else {
        "/dev/null"
    };
    TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""))
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}
