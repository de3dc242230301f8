//! Are a runtime's installed distributions complete? Every distribution pip (or uv) installs
//! lists its files, with their sizes, in `<name>-<version>.dist-info/RECORD`; a file that is
//! gone or has another size than recorded means the runtime was damaged after it was
//! provisioned (a deleted module, a half-finished manual edit). Only existence and size are
//! checked, so the check stays fast on a runtime of a hundred packages; the adapter's own
//! package is hashed file by file by the runtime probe.
//!
//! The installer's `repair` and the doctor's `runtime.packages` use the same check, so they
//! agree on what needs a rebuild.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// One installed file that is not as its distribution recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    /// The distribution (as named in the manifest's pins).
    pub distribution: String,
    /// The path as RECORD lists it (relative to site-packages).
    pub path: String,
    /// `missing`, or `size N, recorded M`.
    pub what: String,
}

impl std::fmt::Display for FileProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.distribution, self.path, self.what)
    }
}

/// What [`check_files`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesReport {
    /// Distributions whose RECORD was read.
    pub distributions: usize,
    /// Files checked.
    pub files: usize,
    pub problems: Vec<FileProblem>,
    /// Named distributions with no RECORD (not installed, or installed without one).
    pub unrecorded: Vec<String>,
}

/// The runtime's `site-packages` (`Lib/site-packages` on Windows, `lib/python3.X/…` elsewhere).
pub fn site_packages(runtime_dir: &Path) -> Option<PathBuf> {
    let windows = runtime_dir.join("Lib").join("site-packages");
    if windows.is_dir() {
        return Some(windows);
    }
    let mut libs: Vec<PathBuf> = fs_err::read_dir(runtime_dir.join("lib"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    libs.sort();
    libs.into_iter().next()
}

/// PEP 503 normalization: lower case, runs of `-`, `_`, `.` as one `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut dash = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            dash = true;
        } else {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Check every file the RECORDs of `names` list, under the runtime at `runtime_dir`.
pub fn check_files(runtime_dir: &Path, names: &[String]) -> FilesReport {
    let mut report = FilesReport::default();
    let Some(site) = site_packages(runtime_dir) else {
        report.unrecorded = names.to_vec();
        return report;
    };
    let mut records: BTreeMap<String, PathBuf> = BTreeMap::new();
    for entry in fs_err::read_dir(&site).into_iter().flatten().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = file.strip_suffix(".dist-info")
            && let Some((name, _version)) = stem.split_once('-')
        {
            records.insert(normalize(name), entry.path().join("RECORD"));
        }
    }
    for name in names {
        let Some(record) = records.get(&normalize(name)) else {
            report.unrecorded.push(name.clone());
            continue;
        };
        let Ok(text) = fs_err::read_to_string(record) else {
            report.unrecorded.push(name.clone());
            continue;
        };
        report.distributions += 1;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let fields = csv_fields(line);
            let Some(rel) = fields.first() else { continue };
            if skipped(rel) {
                continue;
            }
            let path = resolve(&site, rel);
            report.files += 1;
            let size = fields.get(2).and_then(|s| s.trim().parse::<u64>().ok());
            match fs_err::metadata(&path) {
                Err(_) => report.problems.push(FileProblem {
                    distribution: name.clone(),
                    path: rel.clone(),
                    what: "missing".into(),
                }),
                Ok(meta) => {
                    if let Some(want) = size
                        && meta.is_file()
                        && meta.len() != want
                    {
                        report.problems.push(FileProblem {
                            distribution: name.clone(),
                            path: rel.clone(),
                            what: format!("{} bytes, recorded {want}", meta.len()),
                        });
                    }
                }
            }
        }
    }
    report
}

/// Bytecode is regenerated at will and may be absent; RECORD itself has no hash or size.
fn skipped(rel: &str) -> bool {
    rel.ends_with(".pyc")
        || rel.ends_with(".pyo")
        || rel.contains("__pycache__")
        || rel.ends_with(".dist-info/RECORD")
        || rel.ends_with(".dist-info/INSTALLER")
        || rel.ends_with(".dist-info/REQUESTED")
        || rel.ends_with(".dist-info/direct_url.json")
}

/// `rel` (with `/` separators and maybe `..` for scripts) under `site`.
fn resolve(site: &Path, rel: &str) -> PathBuf {
    let mut out = site.to_path_buf();
    for part in Path::new(&rel.replace('\\', "/")).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            _ => {}
        }
    }
    out
}

/// The fields of one CSV line (RECORD quotes paths that hold a comma or a quote).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_missing_and_resized_files_of_the_named_distributions() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("lib/python3.9/site-packages");
        let pkg = site.join("demo_pkg");
        let info = site.join("Demo_Pkg-1.0.dist-info");
        fs_err::create_dir_all(&pkg).unwrap();
        fs_err::create_dir_all(&info).unwrap();
        fs_err::create_dir_all(dir.path().join("bin")).unwrap();
        fs_err::write(pkg.join("__init__.py"), "x = 1\n").unwrap();
        fs_err::write(pkg.join("a,b.py"), "y = 2\n").unwrap();
        fs_err::write(dir.path().join("bin/demo"), "#!x\n").unwrap();
        fs_err::write(
            info.join("RECORD"),
            "demo_pkg/__init__.py,sha256=x,6\n\"demo_pkg/a,b.py\",sha256=y,6\ndemo_pkg/gone.py,sha256=z,3\n\
             demo_pkg/__pycache__/x.cpython-39.pyc,,\n../../../bin/demo,sha256=w,4\nDemo_Pkg-1.0.dist-info/RECORD,,\n",
        )
        .unwrap();
        let names = vec!["demo-pkg".to_string(), "absent".to_string()];
        let r = check_files(dir.path(), &names);
        assert_eq!(r.distributions, 1);
        assert_eq!(r.files, 4);
        assert_eq!(r.unrecorded, vec!["absent".to_string()]);
        assert_eq!(
            r.problems,
            vec![FileProblem {
                distribution: "demo-pkg".into(),
                path: "demo_pkg/gone.py".into(),
                what: "missing".into()
            }]
        );
        fs_err::write(pkg.join("__init__.py"), "x = 10\n").unwrap();
        let r = check_files(dir.path(), &names);
        assert_eq!(r.problems.len(), 2);
        assert_eq!(
            r.problems[0].to_string(),
            "demo-pkg: demo_pkg/__init__.py (7 bytes, recorded 6)"
        );
        assert_eq!(normalize("Foo__Bar.baz"), "foo-bar-baz");
    }
}
