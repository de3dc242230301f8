//! The adapter manifest: one TOML file that describes one scientific CLI, the single source
//! of truth for what the server offers and what the installer and doctor must provide.
//!
//! Loading parses the TOML strictly (unknown keys are errors), reads each workflow's JSON
//! Schema, checks every cross-reference (placeholders, options, artifacts, limits) and
//! reports every problem at once with its file, line and field. A loaded [`Adapter`] has a
//! canonical JSON form and a SHA-256 over it that every dependent response carries.

mod adapter;
mod embedded;
mod engine;
mod error;
mod inputs;
mod load;
mod outputs;
mod programs;
mod progress;
mod template;
mod types;

pub use adapter::{Adapter, AdapterOrigin};
pub use embedded::{EMBEDDED_ADAPTERS, embedded_names};
pub use engine::{CommandEngine, EngineCommand, EngineError, EngineLink, StageGroup, StagedGroup};
pub use error::{ManifestError, ManifestErrors};
pub use inputs::{
    ANY_FORMAT, INPUT_PLACEHOLDER_PREFIX, INPUTS_DIR, InputKind, InputSpec, input_placeholder_id,
};
pub use load::{load_embedded, load_file, load_generated, resolve};
pub use outputs::{
    Comparison, InvalidPattern, MetricReader, MetricSpec, OutputSource, RequireSpec, output_regex,
};
pub use programs::{
    PACKAGE_MANAGERS, ProgramFacts, ProgramRef, RUNTIME_PROGRAM, install_command,
    missing_program_remedy,
};
pub use progress::{
    CliProgress, PROGRESS_GROUPS, ProgressPatternError, ProgressSpec, ProgressStream,
    is_unsafe_in_text, safe_text,
};
pub use template::{
    ABSOLUTE_RUN_VALUES, Filter, NULL, OPTIONS, Placeholder, RUN_VALUES, Template, TemplatePart,
};
pub use types::{
    ArtifactBase, ArtifactSpec, COLUMN_KEYWORD, DatasetsSpec, InputFileFormat, InputFileSpec,
    Manifest, NativeRequirement, OptionFormat, OptionSpec, ProgramSpec, Resources, Runtime,
    RuntimeKind, StepSpec, SuccessSpec, VersionProbe, Workflow,
};
