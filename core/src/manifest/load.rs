//! Loading and validating manifests: strict TOML, referenced schemas, cross-references.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::adapter::{Adapter, AdapterOrigin};
use super::embedded::{EMBEDDED_ADAPTERS, EmbeddedAdapter, embedded_names};
use super::error::{ManifestError, ManifestErrors, line_col};
use super::template::{
    ABSOLUTE_RUN_VALUES, Filter, NULL, OPTIONS, RUN_VALUES, Template, is_placeholder_name,
};
use super::types::{
    COLUMN_KEYWORD, DatasetsSpec, InputFileFormat, Manifest, OptionFormat, Resources, RuntimeKind,
    SuccessSpec, Workflow,
};
use crate::limits::Limits;

/// The only manifest schema version this suite reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Load `name_or_path`: an embedded adapter's name, or a path to a manifest file.
pub fn resolve(name_or_path: &str) -> Result<Adapter, ManifestErrors> {
    let looks_like_path = name_or_path.contains(['/', '\\']) || name_or_path.ends_with(".toml");
    if !looks_like_path {
        if let Some(result) = load_embedded(name_or_path) {
            return result;
        }
        let path = Path::new(name_or_path);
        if path.is_file() {
            return load_file(path);
        }
        return Err(ManifestErrors(vec![ManifestError {
            file: PathBuf::from(name_or_path),
            line: None,
            column: None,
            field: String::new(),
            message: format!("no adapter named '{name_or_path}'"),
            hint: Some(format!(
                "use one of the shipped adapters ({}) or give the path of a manifest file",
                embedded_names().join(", ")
            )),
        }]));
    }
    load_file(Path::new(name_or_path))
}

/// Load the embedded adapter `name`, or `None` when no adapter has that name.
pub fn load_embedded(name: &str) -> Option<Result<Adapter, ManifestErrors>> {
    let embedded = EMBEDDED_ADAPTERS.iter().find(|a| a.name == name)?;
    let files = Files::Embedded(embedded);
    let text = files
        .read(embedded.manifest_path)
        .expect("embedded manifest is present");
    Some(load_text(
        &text,
        &files,
        embedded.manifest_path,
        AdapterOrigin::Embedded {
            name: name.to_string(),
        },
    ))
}

/// Load and validate the manifest file at `path` (schemas resolve against its directory).
pub fn load_file(path: &Path) -> Result<Adapter, ManifestErrors> {
    let text = read_text(path).map_err(|reason| {
        ManifestErrors(vec![ManifestError {
            file: path.to_path_buf(),
            line: None,
            column: None,
            field: String::new(),
            message: format!("cannot read the manifest: {reason}"),
            hint: Some("check the path and that it is a readable UTF-8 TOML file".into()),
        }])
    })?;
    let base = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let origin = AdapterOrigin::File {
        path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    };
    load_text(&text, &Files::Disk(base), &name, origin)
}

/// The most bytes read from a manifest or a file it names: real ones are a few KiB.
const MANIFEST_READ_LIMIT: u64 = 4 * 1024 * 1024;

/// The text of a manifest or schema file, read only when it is a regular file (a FIFO, a
/// device or a link to one is refused before any read, so `adapter check` and `serve` never
/// block on one) and at most [`MANIFEST_READ_LIMIT`] bytes of it.
fn read_text(path: &Path) -> Result<String, String> {
    use crate::fs::{ReadError, read_regular};
    let bytes = match read_regular(path, MANIFEST_READ_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err("file not found".into()),
        Err(ReadError::Io { source, .. }) => return Err(io_reason(&source)),
        Err(ReadError::NotRegular { what, .. }) => {
            return Err(format!(
                "it is {what}, not a regular file; nothing was read"
            ));
        }
        Err(e @ (ReadError::DanglingLink { .. } | ReadError::TooLarge { .. })) => {
            return Err(e.to_string());
        }
    };
    String::from_utf8(bytes).map_err(|_| "not valid UTF-8".into())
}

/// A file a manifest names, read only when it resolves inside the manifest's directory: a
/// link that leads elsewhere would let a manifest read (and serve as its schema) any file
/// of the user's.
fn read_inside(base: &Path, rel: &str) -> Result<String, String> {
    let path = base.join(rel);
    let root = fs_err::canonicalize(base).map_err(|e| io_reason(&e))?;
    let real = match fs_err::canonicalize(&path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("file not found".into()),
        Err(e) => return Err(io_reason(&e)),
    };
    if !real.starts_with(&root) {
        return Err(format!(
            "it resolves to {}, outside the manifest's directory {}; a manifest may use only \
             files below its own directory (copy the file there)",
            real.display(),
            root.display()
        ));
    }
    read_text(&real)
}

fn io_reason(e: &std::io::Error) -> String {
    // fs_err's message repeats the path we already print; keep only the cause.
    match e.kind() {
        std::io::ErrorKind::NotFound => "file not found".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::InvalidData => "not valid UTF-8".into(),
        _ => e.to_string(),
    }
}

/// Where a manifest's referenced files come from.
enum Files<'a> {
    Disk(PathBuf),
    Embedded(&'a EmbeddedAdapter),
}

impl Files<'_> {
    fn read(&self, rel: &str) -> Result<String, String> {
        match self {
            Files::Disk(base) => read_inside(base, rel),
            Files::Embedded(adapter) => adapter
                .files
                .iter()
                .find(|(p, _)| *p == rel)
                .map(|(_, text)| (*text).to_string())
                .ok_or_else(|| "not among the embedded files".to_string()),
        }
    }

    fn display(&self, rel: &str) -> PathBuf {
        match self {
            Files::Disk(base) => base.join(rel),
            Files::Embedded(adapter) => PathBuf::from(format!("<embedded {}>/{rel}", adapter.name)),
        }
    }
}

/// A step in a field path.
#[derive(Debug, Clone)]
enum Seg {
    Key(&'static str),
    Index(usize),
}

fn path_string(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Collects errors against one manifest text, placing each by its field path.
struct Checker<'t> {
    file: PathBuf,
    text: &'t str,
    /// The document with spans, parsed again only when a problem needs a line number (a
    /// second parse at every load was a tenth of a server's start).
    doc: std::cell::OnceCell<Option<Spanned<DeTable<'t>>>>,
    /// An embedded adapter: its progress patterns and schemas are the binary's own text,
    /// compiled by core's tests (`embedded_schemas_and_patterns_compile`), not at each load.
    embedded: bool,
    errors: Vec<ManifestError>,
    warnings: Vec<ManifestError>,
}

impl<'t> Checker<'t> {
    fn new(file: PathBuf, text: &'t str, embedded: bool) -> Self {
        Checker {
            file,
            text,
            doc: std::cell::OnceCell::new(),
            embedded,
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn span_of(&self, path: &[Seg]) -> Option<std::ops::Range<usize>> {
        let doc = self
            .doc
            .get_or_init(|| DeTable::parse(self.text).ok())
            .as_ref()?;
        let mut span = doc.span();
        let mut table: Option<&DeTable<'_>> = Some(doc.get_ref());
        let mut array: Option<&[Spanned<DeValue<'_>>]> = None;
        for seg in path {
            let next: Option<&Spanned<DeValue<'_>>> = match (seg, table, array) {
                (Seg::Key(k), Some(t), _) => t
                    .iter()
                    .find(|(key, _)| key.get_ref().as_ref() == *k)
                    .map(|(_, v)| v),
                (Seg::Index(i), _, Some(a)) => a.get(*i),
                _ => None,
            };
            let Some(value) = next else { break };
            span = value.span();
            table = None;
            array = None;
            match value.get_ref() {
                DeValue::Table(t) => table = Some(t),
                DeValue::Array(a) => array = Some(a),
                _ => {}
            }
        }
        Some(span)
    }

    fn error(&mut self, path: &[Seg], message: impl Into<String>, hint: Option<String>) {
        let (line, column) = match self.span_of(path) {
            Some(span) => {
                let (l, c) = line_col(self.text, span.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        self.errors.push(ManifestError {
            file: self.file.clone(),
            line,
            column,
            field: path_string(path),
            message: message.into(),
            hint,
        });
    }
}

fn load_text(
    text: &str,
    files: &Files<'_>,
    manifest_rel: &str,
    origin: AdapterOrigin,
) -> Result<Adapter, ManifestErrors> {
    let file = files.display(manifest_rel);
    let mut manifest = parse_strict(text, &file)?;
    let mut checker = Checker::new(file, text, matches!(files, Files::Embedded(_)));
    check_manifest(&mut checker, &manifest);
    load_schemas(&mut checker, &mut manifest, files);
    for (i, wf) in manifest.workflows.iter().enumerate() {
        // Cross-references need the schema; a workflow whose schema failed to load was
        // already reported.
        if wf.parameters_schema.is_object() {
            check_workflow_refs(&mut checker, i, wf);
            programs::check_step_refs(&mut checker, i, wf);
        }
    }
    if !checker.errors.is_empty() {
        return Err(ManifestErrors(checker.errors));
    }
    Ok(Adapter::new(manifest, origin, checker.warnings))
}

fn parse_strict(text: &str, file: &Path) -> Result<Manifest, ManifestErrors> {
    let located = |span: Option<std::ops::Range<usize>>| match span {
        Some(s) => {
            let (l, c) = line_col(text, s.start);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    let de = toml::Deserializer::parse(text).map_err(|e| {
        let (line, column) = located(e.span());
        ManifestErrors(vec![ManifestError {
            file: file.to_path_buf(),
            line,
            column,
            field: String::new(),
            message: format!("not valid TOML: {}", e.message().trim()),
            hint: Some("fix the syntax at this position".into()),
        }])
    })?;
    serde_path_to_error::deserialize::<_, Manifest>(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        let (line, column) = located(inner.span());
        let first = ManifestError {
            file: file.to_path_buf(),
            line,
            column,
            field: if field == "." { String::new() } else { field },
            message: inner.message().trim().to_string(),
            hint: Some(
                "see docs/adapter-manifest.md for every key, its type and whether it is required"
                    .into(),
            ),
        };
        // Serde stops at its first error; the structural pass finds the others too.
        ManifestErrors(structure::every_problem(text, file, first))
    })
}

fn is_adapter_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-'))
        && s.len() <= 64
}

fn is_id(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
        && s.len() <= 64
}

/// An id a manifest gives one of its parts (`what`: workflow, artifact, input, …): it must be
/// an id and the first of its name among `seen`; `scope` ends the duplicate's message (e.g.
/// " in this workflow") and `duplicate_hint` says what the duplicate would break.
fn check_id<'a>(
    c: &mut Checker<'_>,
    at: &[Seg],
    what: &str,
    id: &'a str,
    seen: &mut BTreeSet<&'a str>,
    scope: &str,
    duplicate_hint: Option<&str>,
) {
    if !is_id(id) {
        c.error(
            at,
            format!("'{id}' is not a valid {what} id"),
            Some("use lower-case letters, digits and '_', starting with a letter".into()),
        );
    } else if !seen.insert(id) {
        c.error(
            at,
            format!("{what} id '{id}' is declared twice{scope}"),
            duplicate_hint.map(str::to_string),
        );
    }
}

/// A relative path that stays inside its base: no root, no `..`, no empty segments.
fn is_safe_relative(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with(['/', '\\'])
        && !p.contains(':')
        && p.split(['/', '\\'])
            .all(|seg| !seg.is_empty() && seg != "..")
}

/// `name==version` with a PEP 508-style name and no other operators.
fn is_exact_pin(req: &str) -> bool {
    crate::pins::Pin::parse(req).is_some()
}

fn check_manifest(c: &mut Checker<'_>, m: &Manifest) {
    if m.schema_version != SCHEMA_VERSION {
        c.error(
            &[Seg::Key("schema_version")],
            format!(
                "schema_version {} is not supported (this suite reads {SCHEMA_VERSION})",
                m.schema_version
            ),
            Some("upgrade scimcp or write the manifest for schema_version = 1".into()),
        );
    }
    if !is_adapter_name(&m.name) {
        c.error(
            &[Seg::Key("name")],
            format!("'{}' is not a valid adapter name", m.name),
            Some("use lower-case letters, digits and '-', starting with a letter".into()),
        );
    }
    if semver::Version::parse(&m.version).is_err() {
        c.error(
            &[Seg::Key("version")],
            format!("'{}' is not a semantic version", m.version),
            Some("write MAJOR.MINOR.PATCH, e.g. \"0.1.0\"".into()),
        );
    }
    if m.summary.trim().is_empty() || m.summary.len() > 500 {
        c.error(
            &[Seg::Key("summary")],
            "summary must be 1 to 500 characters",
            None,
        );
    }
    check_runtime(c, m);
    programs::check_programs(c, m);
    placement::check_placement(c, m);
    check_limits(c, m);
    if let Some(ds) = &m.datasets {
        check_datasets(c, m, ds);
        for (i, arg) in ds.export.iter().enumerate() {
            let path = [Seg::Key("datasets"), Seg::Key("export"), Seg::Index(i)];
            match Template::parse(arg) {
                Err(e) => c.error(&path, e.to_string(), None),
                Ok(t) => {
                    for p in t.placeholders() {
                        if p != "output_dir" {
                            c.error(
                                &path,
                                format!("placeholder {{{p}}} is not available here"),
                                Some("the dataset export command may use only {output_dir}".into()),
                            );
                        }
                    }
                }
            }
        }
    }
    if m.workflows.is_empty() {
        c.error(
            &[Seg::Key("workflow")],
            "the manifest declares no workflow",
            Some("add at least one [[workflow]] table".into()),
        );
    }
    let mut seen = BTreeSet::new();
    for (i, wf) in m.workflows.iter().enumerate() {
        let at = |k| [Seg::Key("workflow"), Seg::Index(i), Seg::Key(k)];
        check_id(c, &at("id"), "workflow", &wf.id, &mut seen, "", None);
        if wf.summary.trim().is_empty() || wf.summary.len() > 500 {
            c.error(&at("summary"), "summary must be 1 to 500 characters", None);
        }
        if !is_safe_relative(&wf.parameters) {
            c.error(
                &at("parameters"),
                format!(
                    "'{}' must be a relative path inside the manifest's directory",
                    wf.parameters
                ),
                None,
            );
        }
        check_artifacts(c, i, wf, m.effective_limits());
        inputs::check_inputs(c, i, wf);
        outputs::check_outputs(c, i, wf);
        check_env(
            c,
            &[Seg::Key("workflow"), Seg::Index(i), Seg::Key("env")],
            &wf.env,
        );
        if let Some(success) = &wf.success {
            check_success(c, i, success);
        }
        if let Some(progress) = &wf.progress
            && !c.embedded
            && let Err(problem) = progress.compile()
        {
            c.error(
                &[
                    Seg::Key("workflow"),
                    Seg::Index(i),
                    Seg::Key("progress"),
                    Seg::Key("pattern"),
                ],
                problem,
                Some(
                    "e.g. pattern = '^epoch (?P<done>\\d+)/(?P<total>\\d+)' or '^stage: (?P<message>.+)$'"
                        .into(),
                ),
            );
        }
        if let Some(resources) = &wf.resources {
            check_resources(c, i, resources, m.effective_limits());
        }
        let mut paths = BTreeSet::new();
        for (j, f) in wf.input_files.iter().enumerate() {
            let path = [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("input_file"),
                Seg::Index(j),
                Seg::Key("path"),
            ];
            if !is_safe_relative(&f.path) {
                c.error(
                    &path,
                    format!(
                        "'{}' must be a relative path inside the run directory",
                        f.path
                    ),
                    None,
                );
            } else if !paths.insert(f.path.clone()) {
                c.error(
                    &path,
                    format!("input file '{}' is declared twice", f.path),
                    None,
                );
            }
            if f.format == InputFileFormat::Text && !f.template.is_string() {
                let path = [
                    Seg::Key("workflow"),
                    Seg::Index(i),
                    Seg::Key("input_file"),
                    Seg::Index(j),
                    Seg::Key("template"),
                ];
                c.error(&path, "a text input file's template must be a string", None);
            }
        }
    }
}

fn check_runtime(c: &mut Checker<'_>, m: &Manifest) {
    let rt = &m.runtime;
    let at = |k| [Seg::Key("runtime"), Seg::Key(k)];
    match rt.kind {
        RuntimeKind::Python => {
            match &rt.python {
                None => c.error(
                    &at("kind"),
                    "a python runtime needs a `python` interpreter requirement",
                    Some("add e.g. python = \">=3.10, <3.14\"".into()),
                ),
                Some(req) => {
                    if semver::VersionReq::parse(req).is_err() {
                        c.error(
                            &at("python"),
                            format!("'{req}' is not a version requirement"),
                            Some(
                                "write comparators separated by commas, e.g. \">=3.10, <3.14\""
                                    .into(),
                            ),
                        );
                    }
                }
            }
            if rt.package.is_none() {
                c.error(
                    &at("kind"),
                    "a python runtime needs `package`, the distribution that forms the runtime identity",
                    None,
                );
            }
            if rt.launch.is_empty() {
                c.error(
                    &at("launch"),
                    "a python runtime needs launch arguments, e.g. [\"-m\", \"tool\"]",
                    None,
                );
            }
            if rt.executable.is_some() {
                c.error(
                    &at("executable"),
                    "`executable` applies only to kind = \"executable\"",
                    None,
                );
            }
        }
        RuntimeKind::Executable => {
            if rt.executable.as_deref().is_none_or(str::is_empty) {
                c.error(
                    &at("kind"),
                    "an executable runtime needs `executable`, the program to run",
                    None,
                );
            }
        }
    }
    if let Some(src) = &rt.package_source
        && !is_safe_relative(src)
    {
        c.error(
            &at("package_source"),
            format!("'{src}' must be a relative path inside the bundle"),
            Some("give the source tree's path relative to the bundle root, e.g. \"refsci\"".into()),
        );
    }
    let mut names = BTreeSet::new();
    for (i, req) in rt.requirements.iter().enumerate() {
        let path = [Seg::Key("runtime"), Seg::Key("requirements"), Seg::Index(i)];
        if !is_exact_pin(req) {
            c.error(
                &path,
                format!("'{req}' is not an exact pin"),
                Some("pin every requirement exactly, e.g. \"scikit-learn==1.5.2\"; a platform-only requirement takes a marker on sys_platform, platform_system or os_name, e.g. \"pywin32==306; sys_platform == 'win32'\"".into()),
            );
        } else if let Some(pin) = crate::pins::Pin::parse(req)
            && pin.marker.is_none()
        {
            // A name may appear once per platform marker, but only once without one.
            let name = pin.name.to_ascii_lowercase().replace(['_', '.'], "-");
            if !names.insert(name.clone()) {
                c.error(&path, format!("'{name}' is pinned twice"), None);
            }
        }
    }
    for (i, module) in rt.import_check.iter().enumerate() {
        let ok = !module.is_empty()
            && module.split('.').all(|part| {
                let mut ch = part.chars();
                matches!(ch.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
                    && ch.all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if !ok {
            c.error(
                &[Seg::Key("runtime"), Seg::Key("import_check"), Seg::Index(i)],
                format!("'{module}' is not a Python module name"),
                None,
            );
        }
    }
    check_env(c, &[Seg::Key("runtime"), Seg::Key("env")], &rt.env);
    for (i, native) in rt.native.iter().enumerate() {
        for p in &native.platforms {
            if !matches!(p.as_str(), "linux" | "macos" | "windows") {
                c.error(
                    &[
                        Seg::Key("runtime"),
                        Seg::Key("native"),
                        Seg::Index(i),
                        Seg::Key("platforms"),
                    ],
                    format!("unknown platform '{p}'"),
                    Some("use linux, macos or windows".into()),
                );
            }
        }
    }
}

/// Every variable of an `env` table: a portable name the suite does not own, a bounded
/// value. The error sits on the table and names the variable (its key is data, not a field).
fn check_env(c: &mut Checker<'_>, at: &[Seg], env: &std::collections::BTreeMap<String, String>) {
    for (name, value) in env {
        match Template::parse(value) {
            Err(e) => c.error(at, format!("the value of {name}: {e}"), None),
            Ok(t) => {
                for p in t.placeholder_parts() {
                    if !ABSOLUTE_RUN_VALUES.contains(&p.name.as_str()) || !p.filters.is_empty() {
                        c.error(
                            at,
                            format!(
                                "the value of {name} uses {{{}}}; environment values may use only {{work_dir}} and {{state_dir}}",
                                p.name
                            ),
                            Some("e.g. HOME = \"{work_dir}/home\"; parameters never reach the environment".into()),
                        );
                    }
                }
            }
        }
        if let Some(problem) = crate::run_env::manifest_env_problem(name, value) {
            c.error(
                at,
                problem,
                Some("env sets fixed variables for the CLI, e.g. OMP_NUM_THREADS = \"1\" or TERM = \"dumb\"".into()),
            );
        }
    }
}

/// `[datasets]`: an export command or a directory of the runtime's package, not both.
fn check_datasets(c: &mut Checker<'_>, m: &Manifest, ds: &DatasetsSpec) {
    match (ds.export.is_empty(), &ds.package_dir) {
        (true, None) => c.error(
            &[Seg::Key("datasets")],
            "[datasets] must say where the built-in datasets come from",
            Some("either export = [\"datasets\", \"export\", \"{output_dir}\"] (a command that writes them) or package_dir = \"data\" (files inside the runtime's package)".into()),
        ),
        (false, Some(_)) => c.error(
            &[Seg::Key("datasets"), Seg::Key("package_dir")],
            "give either export or package_dir, not both",
            None,
        ),
        (true, Some(dir)) => {
            if !is_safe_relative(dir) {
                c.error(
                    &[Seg::Key("datasets"), Seg::Key("package_dir")],
                    format!("'{dir}' must be a relative path inside the package's directory"),
                    None,
                );
            }
            if m.runtime.package.is_none() {
                c.error(
                    &[Seg::Key("datasets"), Seg::Key("package_dir")],
                    "package_dir needs [runtime] package, whose directory it is relative to",
                    None,
                );
            }
        }
        (false, None) => {}
    }
    for (id, file) in &ds.files {
        let ok_id = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !ok_id || !is_safe_relative(file) || file.contains('/') {
            c.error(
                &[Seg::Key("datasets"), Seg::Key("files")],
                format!("built-in dataset {id:?} = {file:?}: ids are [a-z0-9_-], files are names in package_dir"),
                None,
            );
        }
    }
    if !ds.files.is_empty() && ds.package_dir.is_none() {
        c.error(
            &[Seg::Key("datasets"), Seg::Key("files")],
            "files names data files of package_dir; with export, the command decides the files",
            None,
        );
    }
}

/// `[workflow.success]`: a file inside the working directory and JSON pointers.
fn check_success(c: &mut Checker<'_>, i: usize, success: &SuccessSpec) {
    let at = |k| {
        [
            Seg::Key("workflow"),
            Seg::Index(i),
            Seg::Key("success"),
            Seg::Key(k),
        ]
    };
    if !is_safe_relative(&success.json) {
        c.error(
            &at("json"),
            format!(
                "'{}' must be a relative path inside the working directory",
                success.json
            ),
            None,
        );
    }
    for pointer in std::iter::once(&success.pointer).chain(&success.message) {
        if !pointer.starts_with('/') {
            c.error(
                &at("pointer"),
                format!("'{pointer}' is not a JSON pointer"),
                Some("JSON pointers start with '/', e.g. \"/status\" or \"/error/message\"".into()),
            );
        }
    }
}

/// `[workflow.resources]`: positive, bounded, and a time limit the run timeout allows.
fn check_resources(c: &mut Checker<'_>, i: usize, r: &Resources, limits: Limits) {
    let at = |k| {
        [
            Seg::Key("workflow"),
            Seg::Index(i),
            Seg::Key("resources"),
            Seg::Key(k),
        ]
    };
    if let Some(cpus) = r.cpus
        && !(1..=Resources::MAX_CPUS).contains(&cpus)
    {
        c.error(
            &at("cpus"),
            format!("cpus = {cpus} is outside 1..={}", Resources::MAX_CPUS),
            Some("the CPUs one run of this workflow uses (Slurm --cpus-per-task)".into()),
        );
    }
    if let Some(mb) = r.memory_mb
        && !(1..=Resources::MAX_MEMORY_MB).contains(&mb)
    {
        c.error(
            &at("memory_mb"),
            format!(
                "memory_mb = {mb} is outside 1..={}",
                Resources::MAX_MEMORY_MB
            ),
            Some("memory in MiB for one run (Slurm --mem), e.g. 2048 for 2 GiB".into()),
        );
    }
    if let Some(min) = r.time_limit_min {
        let ceiling = limits.run_timeout_s.div_ceil(60);
        if min == 0 || u64::from(min) > ceiling {
            c.error(
                &at("time_limit_min"),
                format!("time_limit_min = {min} is outside 1..={ceiling}"),
                Some(format!(
                    "at most the run timeout ({} s, limits.run_timeout_s) rounded up to minutes",
                    limits.run_timeout_s
                )),
            );
        }
    }
}

fn check_limits(c: &mut Checker<'_>, m: &Manifest) {
    let effective = m.effective_limits();
    let ceilings = Limits::DEFAULT.entries();
    for ((name, value), (_, ceiling)) in effective.entries().into_iter().zip(ceilings) {
        let key: &'static str = name;
        if value == 0 {
            c.error(
                &[Seg::Key("limits"), Seg::Key(key)],
                format!("{name} must be at least 1"),
                None,
            );
        } else if value > ceiling {
            c.error(
                &[Seg::Key("limits"), Seg::Key(key)],
                format!("{name} = {value} exceeds the suite ceiling {ceiling}"),
                Some("a manifest may tighten a limit, never loosen it".into()),
            );
        }
    }
    if effective.max_concurrent_runs > effective.max_pending_runs {
        c.error(
            &[Seg::Key("limits"), Seg::Key("max_concurrent_runs")],
            "max_concurrent_runs cannot exceed max_pending_runs",
            None,
        );
    }
}

fn check_artifacts(c: &mut Checker<'_>, i: usize, wf: &Workflow, limits: Limits) {
    let mut ids = BTreeSet::new();
    if wf.artifacts.len() > limits.max_artifacts as usize {
        c.error(
            &[Seg::Key("workflow"), Seg::Index(i), Seg::Key("artifact")],
            format!(
                "{} artifacts declared, more than max_artifacts = {}",
                wf.artifacts.len(),
                limits.max_artifacts
            ),
            None,
        );
    }
    for (j, a) in wf.artifacts.iter().enumerate() {
        let at = |k| {
            [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("artifact"),
                Seg::Index(j),
                Seg::Key(k),
            ]
        };
        check_id(c, &at("id"), "artifact", &a.id, &mut ids, "", None);
        if !is_safe_relative(&a.path) {
            c.error(
                &at("path"),
                format!(
                    "'{}' must be a relative path inside the output directory",
                    a.path
                ),
                None,
            );
        } else if a.is_glob() {
            if let Err(e) = globset::GlobBuilder::new(&a.path)
                .literal_separator(true)
                .build()
            {
                c.error(&at("path"), format!("invalid glob: {e}"), None);
            }
        } else if a.min_count.is_some() || a.max_count.is_some() {
            c.error(
                &at("min_count"),
                "min_count and max_count apply only to glob paths",
                None,
            );
        }
        if let (Some(min), Some(max)) = (a.min_count, a.max_count)
            && min > max
        {
            c.error(
                &at("max_count"),
                format!("max_count {max} is below min_count {min}"),
                None,
            );
        }
        if !a.media_type.contains('/') {
            c.error(
                &at("media_type"),
                format!("'{}' is not a media type", a.media_type),
                Some("e.g. \"application/json\" or \"text/csv\"".into()),
            );
        }
        if !a.json_keys.is_empty() && !a.media_type.contains("json") {
            c.error(
                &at("json_keys"),
                "json_keys apply only to JSON artifacts",
                None,
            );
        }
    }
}

fn load_schemas(c: &mut Checker<'_>, m: &mut Manifest, files: &Files<'_>) {
    for (i, wf) in m.workflows.iter_mut().enumerate() {
        if !is_safe_relative(&wf.parameters) {
            continue;
        }
        let path = [Seg::Key("workflow"), Seg::Index(i), Seg::Key("parameters")];
        let schema_file = files.display(&wf.parameters);
        let text = match files.read(&wf.parameters) {
            Ok(t) => t,
            Err(reason) => {
                c.error(
                    &path,
                    format!(
                        "cannot read the parameter schema {}: {reason}",
                        schema_file.display()
                    ),
                    Some("the path is relative to the manifest's directory".into()),
                );
                continue;
            }
        };
        let schema: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                c.errors.push(ManifestError {
                    file: schema_file,
                    line: Some(e.line()),
                    column: Some(e.column()),
                    field: String::new(),
                    message: format!("not valid JSON: {e}"),
                    hint: None,
                });
                continue;
            }
        };
        // An embedded adapter's schemas are compiled (and checked against the JSON Schema
        // meta-schema) by core's tests rather than at every server start, where building the
        // meta-schema validator alone was a sixth of the start. The server compiles each one
        // on its first request.
        let compile = !c.embedded;
        for problem in schema_problems(&schema, compile) {
            c.errors.push(ManifestError {
                file: schema_file.clone(),
                line: None,
                column: None,
                field: problem.0,
                message: problem.1,
                hint: problem.2,
            });
        }
        let mut free = Vec::new();
        free_form_objects(&schema, "", &mut free);
        for pointer in free {
            c.warnings.push(ManifestError {
                file: schema_file.clone(),
                line: None,
                column: None,
                field: pointer,
                message: "a free-form object: any key and value a client sends reaches the CLI (a path, a cache directory, a callable's name)".into(),
                hint: Some("declare the keys the CLI may take, each typed and bounded, with \"additionalProperties\": false".into()),
            });
        }
        wf.parameters_schema = schema;
    }
}

type Problem = (String, String, Option<String>);

/// What makes a parameter schema unusable: it must be a strict object schema that compiles.
/// JSON pointers of the object schemas below the top level that accept keys nobody named:
/// no `"additionalProperties": false`, or `patternProperties`. (`if`/`then` rules that only
/// narrow an object already closed above are not counted.)
fn free_form_objects(schema: &serde_json::Value, pointer: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    let Value::Object(map) = schema else { return };
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        None => map.contains_key("properties") || map.contains_key("additionalProperties"),
        _ => false,
    };
    if !pointer.is_empty()
        && is_object
        && (map.get("additionalProperties") != Some(&Value::Bool(false))
            || map.contains_key("patternProperties"))
    {
        out.push(pointer.to_string());
    }
    for key in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = map.get(key) {
            for (name, child) in children {
                free_form_objects(child, &format!("{pointer}/{key}/{name}"), out);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child @ Value::Object(_)) = map.get(key) {
            free_form_objects(child, &format!("{pointer}/{key}"), out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get(key) {
            for (i, child) in children.iter().enumerate() {
                free_form_objects(child, &format!("{pointer}/{key}/{i}"), out);
            }
        }
    }
}

/// `compile`: also compile the schema (which checks it against its meta-schema first).
fn schema_problems(schema: &serde_json::Value, compile: bool) -> Vec<Problem> {
    let mut out: Vec<Problem> = Vec::new();
    let Some(obj) = schema.as_object() else {
        out.push((
            String::new(),
            "the schema must be a JSON object".into(),
            None,
        ));
        return out;
    };
    if obj.get("type").and_then(|t| t.as_str()) != Some("object") {
        out.push((
            "/type".into(),
            "the schema must have \"type\": \"object\"".into(),
            None,
        ));
    }
    if obj.get("additionalProperties") != Some(&serde_json::Value::Bool(false)) {
        out.push((
            "/additionalProperties".into(),
            "the schema must be strict: \"additionalProperties\": false".into(),
            Some("strict schemas make unknown parameters fail before any process starts".into()),
        ));
    }
    let props = obj.get("properties").and_then(|p| p.as_object());
    if let Some(props) = props {
        for name in props.keys() {
            if !is_placeholder_name(name) {
                out.push((
                    format!("/properties/{name}"),
                    format!("parameter name '{name}' must be lower-case letters, digits and '_'"),
                    None,
                ));
            }
            if RUN_VALUES.contains(&name.as_str()) {
                out.push((
                    format!("/properties/{name}"),
                    format!(
                        "'{name}' is a run value the server fills in; it cannot be a parameter"
                    ),
                    None,
                ));
            }
        }
        for (name, prop) in props {
            if let Some(rule) = prop.get(COLUMN_KEYWORD) {
                out.extend(column_rule_problems(name, prop, rule));
            }
        }
    }
    if let Some(required) = obj.get("required").and_then(|r| r.as_array()) {
        for r in required {
            let name = r.as_str().unwrap_or_default();
            if props.is_none_or(|p| !p.contains_key(name)) {
                out.push((
                    "/required".into(),
                    format!("required parameter '{name}' is not among the properties"),
                    None,
                ));
            }
        }
    }
    if let Some(e) = compile
        .then(|| jsonschema::validator_for(schema).err())
        .flatten()
    {
        out.push((
            e.instance_path().to_string(),
            format!("the schema does not compile: {e}"),
            None,
        ));
    }
    out
}

/// An `x-scimcp-column` rule: an object of known keys, on a string or a list of strings (the
/// server reads the value as column names; on anything else the rule would silently never
/// apply).
fn column_rule_problems(
    name: &str,
    prop: &serde_json::Value,
    rule: &serde_json::Value,
) -> Vec<Problem> {
    let at = format!("/properties/{name}/{COLUMN_KEYWORD}");
    let mut out = Vec::new();
    let Some(rule) = rule.as_object() else {
        out.push((
            at,
            format!(
                "{COLUMN_KEYWORD} must be an object, e.g. {{\"numeric\": true, \"complete\": true}}"
            ),
            None,
        ));
        return out;
    };
    for (key, value) in rule {
        let fits = match key.as_str() {
            "numeric" | "complete" => value.is_boolean(),
            "max_distinct" => value.as_u64().is_some_and(|n| n >= 1),
            _ => {
                out.push((
                    format!("{at}/{key}"),
                    format!("unknown column rule '{key}'"),
                    Some("the rules are numeric (boolean), complete (boolean) and max_distinct (a count of at least 1)".into()),
                ));
                continue;
            }
        };
        if !fits {
            let wants = if key == "max_distinct" {
                "an integer of at least 1"
            } else {
                "true or false"
            };
            out.push((
                format!("{at}/{key}"),
                format!("column rule '{key}' must be {wants}, not {value}"),
                None,
            ));
        }
    }
    let ty = |v: &serde_json::Value| v.get("type").and_then(|t| t.as_str()).map(str::to_string);
    let names_columns = match ty(prop).as_deref() {
        Some("string") => true,
        Some("array") => prop
            .get("items")
            .and_then(ty)
            .is_some_and(|t| t == "string"),
        _ => false,
    };
    if !names_columns {
        out.push((
            at,
            format!("parameter '{name}' is marked as dataset columns but is not a string or a list of strings"),
            Some("column parameters hold column names: \"type\": \"string\", or \"type\": \"array\" with string items".into()),
        ));
    }
    out
}

/// Properties of a workflow's schema and the ones it requires.
pub(crate) fn schema_params(schema: &serde_json::Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let props = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let required = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    (props, required)
}

/// One template of a workflow: every placeholder names a run value, `{null}` (only as a whole
/// value of a structured input file), or a parameter of the schema — a required one, or an
/// optional one with a default — and its filters fit the parameter.
fn check_template(c: &mut Checker<'_>, wf: &Workflow, path: &[Seg], text: &str, structured: bool) {
    let t = match Template::parse(text) {
        Err(e) => return c.error(path, e.to_string(), None),
        Ok(t) => t,
    };
    let (props, required) = schema_params(&wf.parameters_schema);
    let schema_of = |name: &str| wf.parameters_schema.pointer(&format!("/properties/{name}"));
    let whole = t.sole_placeholder().is_some();
    for p in t.placeholder_parts() {
        if p.name == NULL {
            if !(structured && whole && p.filters.is_empty()) {
                c.error(
                    path,
                    "{null} stands for a JSON null: use it alone as a value of a json, toml or yaml input file",
                    None,
                );
            }
            continue;
        }
        if RUN_VALUES.contains(&p.name.as_str()) {
            if !p.filters.is_empty() {
                c.error(
                    path,
                    format!("run value {{{}}} takes no filter", p.name),
                    None,
                );
            }
            continue;
        }
        if let Some(id) = p.input_id() {
            inputs::check_input_placeholder(c, wf, path, p, id);
            continue;
        }
        if p.name == OPTIONS {
            placement::check_marker(c, path, &t, props.contains(OPTIONS));
            continue;
        }
        for name in p.parameters() {
            if required.contains(name) {
                continue;
            }
            if props.contains(name) {
                if schema_of(name).and_then(|s| s.get("default")).is_none() {
                    c.error(
                        path,
                        format!("placeholder {{{}}} reads optional parameter '{name}', which has no default", p.name),
                        Some(format!("give '{name}' a \"default\" in the schema, make it required, or pass it through `options`")),
                    );
                }
                continue;
            }
            c.error(
                path,
                format!("placeholder {{{}}} names no parameter '{name}'", p.name),
                Some(format!(
                    "use a parameter of the schema ({}) or a run value ({})",
                    props.iter().cloned().collect::<Vec<_>>().join(", "),
                    RUN_VALUES.join(", ")
                )),
            );
        }
        for f in &p.filters {
            match f {
                Filter::Positions(_) | Filter::PositionsIn(_) => {
                    for name in p.parameters() {
                        if schema_of(name)
                            .and_then(|s| s.get(COLUMN_KEYWORD))
                            .is_none()
                        {
                            c.error(
                                path,
                                format!("{{{}}} turns '{name}' into column positions, but the schema does not mark it as dataset columns", p.name),
                                Some(format!("add \"{COLUMN_KEYWORD}\": {{}} to the '{name}' property")),
                            );
                        }
                    }
                }
                Filter::Map(pairs) => {
                    let Some(schema) = schema_of(&p.name) else {
                        continue;
                    };
                    let mut must: Vec<String> = Vec::new();
                    if let Some(values) = schema.get("enum").and_then(|e| e.as_array()) {
                        must.extend(
                            values
                                .iter()
                                .map(|v| v.as_str().map_or_else(|| v.to_string(), String::from)),
                        );
                    } else if schema.get("type").and_then(|t| t.as_str()) == Some("boolean") {
                        must.extend(["true".to_string(), "false".to_string()]);
                    }
                    let missing: Vec<&String> = must
                        .iter()
                        .filter(|m| !pairs.iter().any(|(k, _)| k == *m))
                        .collect();
                    if !missing.is_empty() {
                        c.error(
                            path,
                            format!(
                                "{{{}}}'s map has no entry for {}",
                                p.name,
                                missing
                                    .iter()
                                    .map(|m| format!("'{m}'"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            Some(
                                "map every value the schema allows, e.g. map:true=1,false=2".into(),
                            ),
                        );
                    }
                }
                Filter::Text | Filter::Json | Filter::Count => {}
            }
        }
    }
}

fn check_workflow_refs(c: &mut Checker<'_>, i: usize, wf: &Workflow) {
    for (j, arg) in wf.argv.iter().enumerate() {
        check_template(
            c,
            wf,
            &[
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("argv"),
                Seg::Index(j),
            ],
            arg,
            false,
        );
    }
    for (j, line) in wf.stdin.iter().enumerate() {
        check_template(
            c,
            wf,
            &[
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("stdin"),
                Seg::Index(j),
            ],
            line,
            false,
        );
    }
    for (j, f) in wf.input_files.iter().enumerate() {
        let path = [
            Seg::Key("workflow"),
            Seg::Index(i),
            Seg::Key("input_file"),
            Seg::Index(j),
            Seg::Key("template"),
        ];
        let structured = f.format != InputFileFormat::Text;
        let mut strings = Vec::new();
        collect_strings(&f.template, &mut strings);
        for s in strings {
            check_template(c, wf, &path, &s, structured);
        }
    }
    let (props, _) = schema_params(&wf.parameters_schema);
    let mut seen = BTreeSet::new();
    for (j, opt) in wf.options.iter().enumerate() {
        let at = |k| {
            [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("options"),
                Seg::Index(j),
                Seg::Key(k),
            ]
        };
        if !props.contains(&opt.param) {
            c.error(
                &at("param"),
                format!(
                    "option parameter '{}' is not a property of {}",
                    opt.param, wf.parameters
                ),
                Some(format!(
                    "declare it in the schema or use one of: {}",
                    props.iter().cloned().collect::<Vec<_>>().join(", ")
                )),
            );
        } else if !seen.insert(opt.param.clone()) {
            c.error(
                &at("param"),
                format!("parameter '{}' has two options", opt.param),
                None,
            );
        }
        if !opt.flag.starts_with('-')
            || opt.flag.len() < 2
            || opt.flag.contains(char::is_whitespace)
        {
            c.error(
                &at("flag"),
                format!("'{}' is not a command-line flag", opt.flag),
                Some("flags start with '-' and contain no spaces".into()),
            );
        }
        if opt.format == OptionFormat::Switch {
            let ty = wf
                .parameters_schema
                .pointer(&format!("/properties/{}/type", opt.param));
            if ty != Some(&serde_json::Value::String("boolean".into())) {
                c.error(&at("format"), format!("a switch needs a boolean parameter; '{}' is not declared \"type\": \"boolean\"", opt.param), None);
            }
        }
    }
}

fn collect_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

mod inputs;
mod outputs;
mod placement;
mod programs;
mod structure;
#[cfg(test)]
mod tests;
