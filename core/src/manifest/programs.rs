//! Several programs per adapter and several steps per workflow: which program a workflow or
//! step runs (`[programs.<id>]`, a workflow's own `program`/`launch`, `[[workflow.step]]`),
//! its declared facts, and the remedy when it is missing. The tables themselves
//! ([`ProgramSpec`](super::types::ProgramSpec), [`VersionProbe`], [`StepSpec`]) are in
//! `types.rs` with the rest of the data model, which this file reads and never the reverse.

use std::collections::BTreeMap;

use super::types::{Manifest, RuntimeKind, StepSpec, VersionProbe, Workflow};

/// The id a workflow or step may use to name the runtime's own program explicitly; a
/// `[programs.<id>]` table cannot take it.
pub const RUNTIME_PROGRAM: &str = "runtime";

/// The package managers a `provided_by` table may name. Closed, so a typo ("debain") is an
/// error at load time instead of a remedy nobody can follow; each has a fixed install
/// command in [`install_command`].
pub const PACKAGE_MANAGERS: &[&str] = &[
    "debian", "ubuntu", "fedora", "rhel", "arch", "alpine", "homebrew", "macports", "conda", "pip",
    "winget", "choco", "scoop", "nix",
];

/// What one step of a run executes once references are resolved: the program id (or
/// [`RUNTIME_PROGRAM`]) and the launch prefix in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramRef<'m> {
    pub id: &'m str,
    pub launch: &'m [String],
}

impl Manifest {
    /// The program a workflow's single step runs (its `program`, else the runtime's) and the
    /// launch prefix in force.
    pub fn workflow_program<'m>(&'m self, wf: &'m Workflow) -> ProgramRef<'m> {
        self.program_ref(wf.program.as_deref(), wf.launch.as_deref())
    }

    /// The program a step runs: the step's, else the workflow's, else the runtime's; its
    /// launch: the step's, else the workflow's when the program is the workflow's, else the
    /// program's own.
    pub fn step_program<'m>(&'m self, wf: &'m Workflow, step: &'m StepSpec) -> ProgramRef<'m> {
        let id = step.program.as_deref().or(wf.program.as_deref());
        let launch = step.launch.as_deref().or_else(|| {
            if step.program.is_none() || step.program == wf.program {
                wf.launch.as_deref()
            } else {
                None
            }
        });
        self.program_ref(id, launch)
    }

    fn program_ref<'m>(
        &'m self,
        id: Option<&'m str>,
        launch: Option<&'m [String]>,
    ) -> ProgramRef<'m> {
        let id = id.unwrap_or(RUNTIME_PROGRAM);
        let own: &[String] = if id == RUNTIME_PROGRAM {
            &self.runtime.launch
        } else {
            self.programs
                .get(id)
                .map(|p| p.launch.as_slice())
                .unwrap_or(&[])
        };
        ProgramRef {
            id,
            launch: launch.unwrap_or(own),
        }
    }

    /// Every program id a workflow runs, in step order, without repeats.
    pub fn workflow_program_ids<'m>(&'m self, wf: &'m Workflow) -> Vec<&'m str> {
        let mut ids: Vec<&str> = Vec::new();
        if wf.steps.is_empty() {
            ids.push(self.workflow_program(wf).id);
        } else {
            for step in &wf.steps {
                let id = self.step_program(wf, step).id;
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        ids
    }

    /// True when runs of `wf` need program resolution (an executable runtime, or a workflow
    /// that names a `[programs.<id>]` program); python-only workflows keep today's identity.
    pub fn workflow_uses_programs(&self, wf: &Workflow) -> bool {
        self.runtime.kind == RuntimeKind::Executable
            || self
                .workflow_program_ids(wf)
                .iter()
                .any(|id| *id != RUNTIME_PROGRAM)
    }

    /// The executable, version probe, remedy and space rule of a program id.
    pub fn program_facts<'m>(&'m self, id: &str) -> Option<ProgramFacts<'m>> {
        if id == RUNTIME_PROGRAM {
            let rt = &self.runtime;
            return Some(ProgramFacts {
                executable: rt.executable.as_deref()?,
                version: rt.version.as_ref(),
                provided_by: &rt.provided_by,
                paths_with_spaces: rt.paths_with_spaces.unwrap_or(true),
            });
        }
        let p = self.programs.get(id)?;
        Some(ProgramFacts {
            executable: &p.executable,
            version: p.version.as_ref(),
            provided_by: &p.provided_by,
            paths_with_spaces: p.paths_with_spaces.unwrap_or(true),
        })
    }
}

/// A program's declared facts, whether it is the runtime's or a `[programs.<id>]`.
#[derive(Debug, Clone, Copy)]
pub struct ProgramFacts<'m> {
    pub executable: &'m str,
    pub version: Option<&'m VersionProbe>,
    pub provided_by: &'m BTreeMap<String, String>,
    pub paths_with_spaces: bool,
}

/// The command that installs `package` with `manager` (one of [`PACKAGE_MANAGERS`]).
pub fn install_command(manager: &str, package: &str) -> String {
    match manager {
        "debian" | "ubuntu" => format!("sudo apt install {package}"),
        "fedora" | "rhel" => format!("sudo dnf install {package}"),
        "arch" => format!("sudo pacman -S {package}"),
        "alpine" => format!("sudo apk add {package}"),
        "homebrew" => format!("brew install {package}"),
        "macports" => format!("sudo port install {package}"),
        "conda" => match package.split_once("::") {
            Some((channel, name)) => format!("conda install -c {channel} {name}"),
            None => format!("conda install {package}"),
        },
        "pip" => format!("python -m pip install {package}"),
        "winget" => format!("winget install {package}"),
        "choco" => format!("choco install {package}"),
        "scoop" => format!("scoop install {package}"),
        "nix" => format!("nix profile install nixpkgs#{package}"),
        other => format!("install {package} with {other}"),
    }
}

fn manager_label(manager: &str) -> &str {
    match manager {
        "debian" => "Debian's",
        "ubuntu" => "Ubuntu's",
        "fedora" => "Fedora's",
        "rhel" => "RHEL's",
        "arch" => "Arch Linux's",
        "alpine" => "Alpine's",
        "homebrew" => "Homebrew's",
        "macports" => "MacPorts'",
        "conda" => "conda's",
        "pip" => "PyPI's",
        "winget" => "winget's",
        "choco" => "Chocolatey's",
        "scoop" => "Scoop's",
        "nix" => "Nixpkgs'",
        other => other,
    }
}

/// The remedy for a missing program: each declared package with its install command, e.g.
/// "install Debian's autodock-vina: sudo apt install autodock-vina; or conda's
/// conda-forge::vina: conda install -c conda-forge vina". Without `provided_by`, it says to
/// put the program on PATH.
pub fn missing_program_remedy(executable: &str, provided_by: &BTreeMap<String, String>) -> String {
    // Linux distributions first, in the closed list's order, so the likeliest remedy leads.
    let mut parts = Vec::new();
    for manager in PACKAGE_MANAGERS {
        if let Some(package) = provided_by.get(*manager) {
            parts.push(format!(
                "{} {package}: {}",
                manager_label(manager),
                install_command(manager, package)
            ));
        }
    }
    let path_hint = format!(
        "put `{executable}` on the PATH the server starts with (or give its absolute path in the manifest), then restart the server"
    );
    if parts.is_empty() {
        return path_hint;
    }
    format!("install {}; then {path_hint}", parts.join("; or "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remedy_names_each_package_with_its_command() {
        let mut by = BTreeMap::new();
        by.insert("conda".to_string(), "conda-forge::vina".to_string());
        by.insert("debian".to_string(), "autodock-vina".to_string());
        let r = missing_program_remedy("vina", &by);
        assert!(
            r.starts_with("install Debian's autodock-vina: sudo apt install autodock-vina; or conda's conda-forge::vina: conda install -c conda-forge vina"),
            "{r}"
        );
        assert!(r.contains("`vina` on the PATH"), "{r}");
    }

    #[test]
    fn remedy_without_packages_says_where_to_put_the_program() {
        let r = missing_program_remedy("mafft", &BTreeMap::new());
        assert!(r.starts_with("put `mafft` on the PATH"), "{r}");
    }
}
