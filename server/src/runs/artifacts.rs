//! Matching the files a run produced against the manifest's declarations, hashing and
//! indexing them. Every regular file inside the output directory is indexed; elsewhere in
//! the working directory, only files a `base = "work"` declaration matches (a CLI that
//! writes its results where it chooses). Symbolic links are never followed, and nothing
//! outside the working directory is looked at.

use std::collections::BTreeMap;
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use scimcp_core::Limits;
use scimcp_core::manifest::{ArtifactBase, ArtifactSpec};
use serde_json::Value;

use super::state::{ArtifactProblem, ArtifactRecord};

/// Deepest directory level searched under the output directory.
const MAX_DEPTH: usize = 16;
/// Largest JSON artifact parsed for `json_keys`.
const MAX_JSON_BYTES: u64 = 16 * 1024 * 1024;

/// What was found.
#[derive(Debug, Default)]
pub struct Collected {
    pub artifacts: Vec<ArtifactRecord>,
    pub problems: Vec<ArtifactProblem>,
    pub reported: BTreeMap<String, BTreeMap<String, Value>>,
    pub skipped: Vec<String>,
}

struct Matcher<'a> {
    spec: &'a ArtifactSpec,
    glob: Option<GlobMatcher>,
}

impl Matcher<'_> {
    fn matches(&self, rel: &str) -> bool {
        match &self.glob {
            Some(g) => g.is_match(rel),
            None => self.spec.path == rel,
        }
    }
}

/// Walk the output directory (`work/output_rel`), index every regular file, add the files
/// of the working directory that `base = "work"` declarations match, and check the
/// declarations.
pub fn collect(
    work_dir: &Path,
    output_rel: &str,
    specs: &[ArtifactSpec],
    limits: &Limits,
) -> Collected {
    let output_dir = work_dir.join(output_rel);
    let mut files: Vec<(ArtifactBase, String)> = Vec::new();
    let mut skipped = Vec::new();
    if output_dir.is_dir() {
        let mut found = Vec::new();
        walk(&output_dir, &output_dir, 0, &mut found, &mut skipped, None);
        files.extend(found.into_iter().map(|f| (ArtifactBase::Output, f)));
    }
    if specs.iter().any(|s| s.base == ArtifactBase::Work) {
        // Only declared files count from here: a CLI's working directory also holds its
        // inputs, caches and logs.
        let mut found = Vec::new();
        let mut ignored = Vec::new();
        walk(
            work_dir,
            work_dir,
            0,
            &mut found,
            &mut ignored,
            Some(output_rel),
        );
        files.extend(found.into_iter().map(|f| (ArtifactBase::Work, f)));
    }
    files.sort();
    let matchers: Vec<Matcher<'_>> = specs
        .iter()
        .map(|spec| Matcher {
            spec,
            glob: spec.is_glob().then(|| {
                GlobBuilder::new(&spec.path)
                    .literal_separator(true)
                    .build()
                    .expect("globs are checked when the manifest loads")
                    .compile_matcher()
            }),
        })
        .collect();
    let mut out = Collected {
        skipped,
        ..Collected::default()
    };
    let mut counts = vec![0u32; specs.len()];
    for (base, rel) in files {
        let found = matchers
            .iter()
            .position(|m| m.spec.base.directory() == base && m.matches(&rel));
        if base == ArtifactBase::Work && found.is_none() {
            continue;
        }
        let path = match base {
            ArtifactBase::Work => work_dir.join(&rel),
            _ => output_dir.join(&rel),
        };
        let Ok(meta) = fs_err::symlink_metadata(&path) else {
            continue;
        };
        if out.artifacts.len() >= limits.max_artifacts as usize {
            out.skipped.push(format!(
                "{rel} (over max_artifacts = {})",
                limits.max_artifacts
            ));
            continue;
        }
        if meta.len() > limits.max_artifact_bytes {
            out.skipped.push(format!(
                "{rel} ({} bytes, over max_artifact_bytes)",
                meta.len()
            ));
            continue;
        }
        let Ok((sha256, size_bytes)) = scimcp_core::hash::sha256_file(&path) else {
            out.skipped.push(format!("{rel} (unreadable)"));
            continue;
        };
        let (id, media_type) = match found {
            Some(i) => {
                counts[i] += 1;
                let spec = matchers[i].spec;
                if size_bytes == 0 && spec.required && !spec.allow_empty {
                    out.problems.push(ArtifactProblem {
                        id: spec.id.clone(),
                        path: rel.clone(),
                        problem: "empty (0 bytes): the CLI wrote nothing into this required \
                                  artifact (allow_empty = true accepts an empty file)"
                            .into(),
                    });
                }
                if !spec.json_keys.is_empty() {
                    check_json(&path, &rel, spec, &mut out);
                }
                (Some(spec.id.clone()), spec.media_type.clone())
            }
            None => (None, guess_media_type(&rel).to_string()),
        };
        out.artifacts.push(ArtifactRecord {
            id,
            path: rel,
            media_type,
            size_bytes,
            sha256,
            base,
        });
    }
    for (spec, count) in specs.iter().zip(counts) {
        let min = spec.min_count.unwrap_or(u32::from(spec.required));
        if (spec.required || spec.min_count.is_some()) && count < min {
            let problem = if count == 0 {
                "missing".to_string()
            } else {
                format!("{count} file(s) match, at least {min} required")
            };
            out.problems.push(ArtifactProblem {
                id: spec.id.clone(),
                path: spec.path.clone(),
                problem,
            });
        }
        if let Some(max) = spec.max_count
            && count > max
        {
            out.problems.push(ArtifactProblem {
                id: spec.id.clone(),
                path: spec.path.clone(),
                problem: format!("{count} files match, at most {max} allowed"),
            });
        }
    }
    out
}

fn check_json(path: &Path, rel: &str, spec: &ArtifactSpec, out: &mut Collected) {
    let problem = |p: String| ArtifactProblem {
        id: spec.id.clone(),
        path: rel.to_string(),
        problem: p,
    };
    let too_big = fs_err::metadata(path)
        .map(|m| m.len() > MAX_JSON_BYTES)
        .unwrap_or(true);
    if too_big {
        out.problems.push(problem(format!(
            "larger than {MAX_JSON_BYTES} bytes; json_keys not checked"
        )));
        return;
    }
    // A read error is said as serde_json says an I/O error: its own text, no position.
    let parsed: Result<Value, serde_json::Error> = fs_err::read(path)
        .map_err(serde_json::Error::io)
        .and_then(|b| serde_json::from_slice(&b));
    match parsed {
        Err(e) => out.problems.push(problem(format!("not valid JSON: {e}"))),
        Ok(Value::Object(map)) => {
            let missing: Vec<&str> = spec
                .json_keys
                .iter()
                .filter(|k| !map.contains_key(*k))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                out.problems
                    .push(problem(format!("missing keys: {}", missing.join(", "))));
            }
            let values = spec
                .json_keys
                .iter()
                .filter_map(|k| map.get(k).map(|v| (k.clone(), v.clone())))
                .collect();
            out.reported.insert(spec.id.clone(), values);
        }
        Ok(_) => out.problems.push(problem("not a JSON object".into())),
    }
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    files: &mut Vec<String>,
    skipped: &mut Vec<String>,
    leave_out: Option<&str>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let rel = path
            .strip_prefix(root)
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        if leave_out == Some(rel.as_str()) {
            continue;
        }
        if kind.is_symlink() {
            skipped.push(format!("{rel} (symbolic link, not followed)"));
        } else if kind.is_dir() {
            walk(root, &path, depth + 1, files, skipped, leave_out);
        } else if kind.is_file() {
            files.push(rel);
        } else {
            skipped.push(format!("{rel} (not a regular file)"));
        }
    }
}

pub(super) fn guess_media_type(rel: &str) -> &'static str {
    let ext = rel
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match ext.as_str() {
        "json" => "application/json",
        "csv" => "text/csv",
        "txt" | "log" | "pid" => "text/plain",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "html" => "text/html",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, path: &str, required: bool, keys: &[&str]) -> ArtifactSpec {
        ArtifactSpec {
            id: id.into(),
            path: path.into(),
            media_type: if path.ends_with(".json") {
                "application/json".into()
            } else {
                "text/csv".into()
            },
            required,
            json_keys: keys.iter().map(|s| s.to_string()).collect(),
            min_count: None,
            max_count: None,
            base: Default::default(),
            step: None,
            allow_empty: false,
        }
    }

    #[test]
    fn indexes_matches_and_reports_problems() {
        let dir = tempfile::tempdir().unwrap();
        let out = &dir.path().join("output");
        fs_err::create_dir_all(out).unwrap();
        fs_err::write(out.join("metrics.json"), r#"{"r2": 0.5}"#).unwrap();
        fs_err::create_dir_all(out.join("plots")).unwrap();
        fs_err::write(out.join("plots/a.csv"), "x\n").unwrap();
        fs_err::write(out.join("extra.txt"), "hi").unwrap();
        let specs = vec![
            spec("metrics", "metrics.json", true, &["r2", "rmse"]),
            spec("plots", "plots/*.csv", true, &[]),
            spec("predictions", "predictions.csv", true, &[]),
        ];
        let c = collect(dir.path(), "output", &specs, &Limits::DEFAULT);
        let paths: Vec<_> = c
            .artifacts
            .iter()
            .map(|a| (a.path.as_str(), a.id.as_deref()))
            .collect();
        assert_eq!(
            paths,
            vec![
                ("extra.txt", None),
                ("metrics.json", Some("metrics")),
                ("plots/a.csv", Some("plots"))
            ]
        );
        let problems: Vec<_> = c
            .problems
            .iter()
            .map(|p| (p.id.as_str(), p.problem.as_str()))
            .collect();
        assert_eq!(
            problems,
            vec![
                ("metrics", "missing keys: rmse"),
                ("predictions", "missing")
            ]
        );
        assert_eq!(c.reported["metrics"]["r2"], serde_json::json!(0.5));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs_err::write(outside.path().join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("link.txt"),
        )
        .unwrap();
        let c = collect(dir.path(), ".", &[], &Limits::DEFAULT);
        assert!(c.artifacts.is_empty());
        assert_eq!(c.skipped.len(), 1);
    }

    #[test]
    fn declared_files_of_the_working_directory_are_indexed_and_nothing_else_there() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        let run = work.join("geopi_output/scimcp/run");
        fs_err::create_dir_all(run.join("metrics")).unwrap();
        fs_err::create_dir_all(work.join("output")).unwrap();
        fs_err::create_dir_all(work.join("home/.cache")).unwrap();
        fs_err::write(
            run.join("metrics/Model Score - KMeans.txt"),
            r#"{"silhouette_score": 0.35}"#,
        )
        .unwrap();
        fs_err::write(work.join("events.json"), r#"{"status": "completed"}"#).unwrap();
        fs_err::write(work.join("home/.cache/font.json"), "{}").unwrap();
        fs_err::write(work.join("output/a.csv"), "x\n").unwrap();
        let mut score = spec(
            "score",
            "geopi_output/*/*/metrics/Model Score - *.txt",
            true,
            &["silhouette_score"],
        );
        score.media_type = "application/json".into();
        score.base = ArtifactBase::Work;
        let mut events = spec("events", "events.json", true, &["status"]);
        events.base = ArtifactBase::Work;
        let c = collect(work, "output", &[score, events], &Limits::DEFAULT);
        let found: Vec<(&str, ArtifactBase)> = c
            .artifacts
            .iter()
            .map(|a| (a.path.as_str(), a.base))
            .collect();
        assert_eq!(
            found,
            vec![
                ("a.csv", ArtifactBase::Output),
                ("events.json", ArtifactBase::Work),
                (
                    "geopi_output/scimcp/run/metrics/Model Score - KMeans.txt",
                    ArtifactBase::Work
                ),
            ]
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.reported["score"]["silhouette_score"], 0.35);
    }
}
