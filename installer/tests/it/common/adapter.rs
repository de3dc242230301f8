//! Test adapters and what they install from: a small manifest written into a folder (an
//! adapter given as `--adapter PATH`), pure-Python wheels built byte by byte (a wheelhouse
//! that needs no network), and a stand-in Python that answers the installer's steps without
//! installing anything.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64ct::{Base64UrlUnpadded, Encoding};
use sha2::{Digest, Sha256};

/// What a test adapter declares.
#[derive(Debug, Clone)]
pub struct Demo<'a> {
    pub name: &'a str,
    /// `[runtime] python`.
    pub python: &'a str,
    pub requirements: &'a [&'a str],
    pub package: &'a str,
    pub binary_only: bool,
    pub import_check: &'a [&'a str],
}

impl Default for Demo<'_> {
    fn default() -> Self {
        Demo {
            name: "demo",
            python: ">=3.9, <3.10",
            requirements: &["demo-pkg==1.0"],
            package: "demo-pkg",
            binary_only: true,
            import_check: &["demo_pkg"],
        }
    }
}

/// Write the adapter into `dir` (its manifest and its one parameter schema); the manifest's
/// path.
pub fn write_adapter(dir: &Path, demo: &Demo<'_>) -> PathBuf {
    fs_err::create_dir_all(dir.join("schemas")).unwrap();
    let list = |items: &[&str]| {
        items
            .iter()
            .map(|i| format!("{i:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let manifest = format!(
        "schema_version = 1\nname = \"{name}\"\nversion = \"0.1.0\"\nsummary = \"A small adapter for the installer's tests.\"\n\n\
         [runtime]\nkind = \"python\"\npython = \"{python}\"\nrequirements = [{requirements}]\npackage = \"{package}\"\n\
         binary_only = {binary_only}\nlaunch = [\"-m\", \"demo_pkg\"]\nimport_check = [{imports}]\n\n\
         [[workflow]]\nid = \"echo\"\nsummary = \"Write a file.\"\nparameters = \"schemas/echo.json\"\nargv = [\"--out\", \"{{output_dir}}\"]\n\n\
         [[workflow.artifact]]\nid = \"out\"\npath = \"out.txt\"\nmedia_type = \"text/plain\"\nrequired = true\n",
        name = demo.name,
        python = demo.python,
        requirements = list(demo.requirements),
        package = demo.package,
        binary_only = demo.binary_only,
        imports = list(demo.import_check),
    );
    let path = dir.join(format!("{}.toml", demo.name));
    fs_err::write(&path, manifest).unwrap();
    fs_err::write(
        dir.join("schemas/echo.json"),
        "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", \"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}\n",
    )
    .unwrap();
    path
}

/// A pure-Python wheel `<dist>-<version>-py3-none-any.whl` in `dir` holding `files`
/// (`(path, text)`), with METADATA, WHEEL and a RECORD of every file's hash and size.
pub fn wheel(dir: &Path, dist: &str, version: &str, files: &[(&str, &str)]) -> PathBuf {
    let stem = dist.replace('-', "_");
    let info = format!("{stem}-{version}.dist-info");
    let mut entries: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(p, t)| ((*p).to_string(), t.as_bytes().to_vec()))
        .collect();
    entries.push((
        format!("{info}/METADATA"),
        format!("Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n").into_bytes(),
    ));
    entries.push((
        format!("{info}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: scimcp-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
            .to_vec(),
    ));
    let mut record = String::new();
    for (path, bytes) in &entries {
        let hash = Base64UrlUnpadded::encode_string(&Sha256::digest(bytes));
        record.push_str(&format!("{path},sha256={hash},{}\n", bytes.len()));
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    entries.push((format!("{info}/RECORD"), record.into_bytes()));
    fs_err::create_dir_all(dir).unwrap();
    let path = dir.join(format!("{stem}-{version}-py3-none-any.whl"));
    let mut zip = zip::ZipWriter::new(fs_err::File::create(&path).unwrap());
    for (name, bytes) in entries {
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.finish().unwrap();
    path
}

/// The wheel of the package every test adapter pins (`demo-pkg`, module `demo_pkg`):
/// `__init__.py` runs `init` on import.
pub fn demo_wheel(dir: &Path, version: &str, init: &str) -> PathBuf {
    wheel(
        dir,
        "demo-pkg",
        version,
        &[
            ("demo_pkg/__init__.py", init),
            ("demo_pkg/__main__.py", "print('demo')\n"),
            ("demo_pkg/data/table.csv", "a,b\n1,2\n"),
        ],
    )
}

/// A stand-in interpreter that reports Python `version`: it answers the interpreter query,
/// makes a "venv" by copying itself, logs every `pip` call to `$FAKE_LOG` (and fails it with
/// `$FAKE_PIP_FAIL` on stderr when that is set), passes the import check and prints a runtime
/// probe in which every requested distribution has version 1.0.
pub fn fake_python(version: &str) -> String {
    format!(
        r#"#!/bin/sh
# venv and pip run isolated: `-I -B -m MODULE …`.
if [ "$1 $2 $3" = "-I -B -m" ]; then shift 2; fi
case "$1" in
  -c) echo {version}; echo "$0"; exit 0 ;;
  -m)
    if [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0; fi
    if [ "$2" = pip ]; then
      echo "pip $*" >> "$FAKE_LOG"
      if [ -n "$FAKE_PIP_FAIL" ]; then printf '%s\n' "$FAKE_PIP_FAIL" >&2; exit 1; fi
      exit 0
    fi ;;
  -I)
    case "$4" in import*) exit 0 ;; esac
    pkg="$5"; shift 5
    versions=""
    for n in "$@"; do versions="$versions${{versions:+, }}\"$n\": \"1.0\""; done
    printf '{{"python": "{version}", "executable": "%s", "implementation": "cpython", "versions": {{%s}}, "package": {{"name": "%s", "version": "1.0", "files": 1, "sha256": "feed"}}}}\n' "$0" "$versions" "$pkg"
    exit 0 ;;
esac
echo "unexpected: $*" >&2
exit 3
"#
    )
}

/// Write an executable script.
#[cfg(unix)]
pub fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = path.parent() {
        fs_err::create_dir_all(parent).unwrap();
    }
    fs_err::write(path, text).unwrap();
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A real CPython for tests that build real runtimes: the dev `.venv`'s base interpreter
/// (what `python -m venv` needs), else `python3` on PATH; with its version.
pub fn real_python() -> (PathBuf, String) {
    let venv = super::repo_root().join(".venv/bin/python");
    let candidate = if venv.is_file() {
        venv
    } else {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("python3"))
            .find(|p| p.is_file())
            .expect("a python3 on PATH")
    };
    let out = std::process::Command::new(&candidate)
        .args([
            "-c",
            "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys._base_executable)",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let version = lines.next().unwrap().trim().to_string();
    let base = PathBuf::from(lines.next().unwrap().trim());
    (base, version)
}

/// `>=3.X, <3.(X+1)` for a version `3.X.Y`: a range only that Python meets.
pub fn range_of(version: &str) -> String {
    let minor: u32 = version.split('.').nth(1).unwrap().parse().unwrap();
    format!(">=3.{minor}, <3.{}", minor + 1)
}
