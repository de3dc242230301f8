//! Where evidence was taken: the operating system, the architecture, the CPU model, the
//! scientific runtime's identity and the numerical libraries (with the kernel each chose
//! for this CPU). Recorded in every snapshot and never compared: it explains a drift.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The machine and runtime one piece of evidence came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `linux`, `macos`, `windows`.
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// What the server's `get_environment` reported about the scientific runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeIdentity>,
    /// The BLAS/OpenMP libraries loaded by the runtime's numerical stack.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numeric_libraries: Vec<NumericLibrary>,
}

/// The scientific runtime as the server saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeIdentity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// The adapter package and its identity hash (its installed files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_sha256: Option<String>,
    /// Installed versions of the pinned distributions.
    #[serde(default)]
    pub libraries: BTreeMap<String, Option<String>>,
    /// The programs the server resolved (an executable runtime, `[programs.<id>]`): which
    /// build gave the evidence. Paths are left out: they name this machine's layout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramIdentity>,
}

/// One resolved program, as `get_environment` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramIdentity {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// One numerical library as threadpoolctl reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumericLibrary {
    /// `blas` or `openmp`.
    pub user_api: String,
    /// `openblas`, `mkl`, `blis`, `openmp`, …
    pub internal_api: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The kernel family it chose for this CPU (OpenBLAS: `Haswell`, `SkylakeX`, `Zen`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_threads: Option<u64>,
}

impl Machine {
    /// This machine, without runtime details.
    pub fn this() -> Machine {
        Machine {
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cpu: cpu_model(),
            runtime: None,
            numeric_libraries: Vec::new(),
        }
    }

    /// `os-arch`, the name of this platform's snapshot directory when it needs its own.
    pub fn platform(&self) -> String {
        format!("{}-{}", self.os, self.arch)
    }

    /// One line for humans.
    pub fn summary(&self) -> String {
        let mut out = format!("{} {}", self.os, self.arch);
        if let Some(cpu) = &self.cpu {
            out.push_str(&format!(", {cpu}"));
        }
        for lib in &self.numeric_libraries {
            out.push_str(&format!(
                ", {} {}",
                lib.internal_api,
                lib.version.as_deref().unwrap_or("?")
            ));
            if let Some(arch) = &lib.architecture {
                out.push_str(&format!(" ({arch} kernels)"));
            }
        }
        for p in self.runtime.iter().flat_map(|rt| &rt.programs) {
            out.push_str(&format!(
                ", {} {}",
                p.id,
                p.version.as_deref().unwrap_or("(no version)")
            ));
        }
        if let Some(rt) = &self.runtime
            && let Some(sha) = &rt.identity_sha256
        {
            out.push_str(&format!(
                ", runtime {} {}…",
                rt.package.as_deref().unwrap_or("?"),
                &sha[..sha.len().min(12)]
            ));
        }
        out
    }

    /// The runtime part from a `get_environment` answer.
    pub fn with_runtime(mut self, environment: &serde_json::Value) -> Machine {
        let probe = &environment["probe"];
        let libraries = probe["versions"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().map(str::to_string)))
                    .collect()
            })
            .unwrap_or_default();
        let programs = environment["programs"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .map(|p| ProgramIdentity {
                        id: p["id"].as_str().unwrap_or("?").to_string(),
                        version: p["version"].as_str().map(str::to_string),
                        sha256: p["sha256"].as_str().map(str::to_string),
                    })
                    .collect()
            })
            .unwrap_or_default();
        if environment["runtime_kind"] == "executable" {
            // The BLAS libraries were probed in the gate's Python; this CLI never loads them.
            self.numeric_libraries.clear();
        }
        self.runtime = Some(RuntimeIdentity {
            python: probe["python"].as_str().map(str::to_string),
            package: probe["package"]["name"].as_str().map(str::to_string),
            identity_sha256: probe["package"]["sha256"].as_str().map(str::to_string),
            libraries,
            programs,
        });
        self
    }
}

/// The CPU's marketing name, where the platform tells it without privileges.
fn cpu_model() -> Option<String> {
    let name = if cfg!(target_os = "linux") {
        let info = fs_err::read_to_string("/proc/cpuinfo").ok()?;
        ["model name", "Hardware", "cpu model"]
            .iter()
            .find_map(|key| {
                info.lines().find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    (k.trim() == *key).then(|| v.trim().to_string())
                })
            })
    } else if cfg!(target_os = "macos") {
        let mut cmd = std::process::Command::new("sysctl");
        cmd.args(["-n", "machdep.cpu.brand_string"]);
        // Through scimcp-process like every child: bounded in time and output, its group
        // ended if it hangs.
        let step = scimcp_process::Step::new("the CPU name query", cmd)
            .timeout(std::time::Duration::from_secs(10));
        let out = scimcp_process::run(step).ok()?;
        Some(out.stdout.trim().to_string())
    } else {
        std::env::var("PROCESSOR_IDENTIFIER").ok()
    }?;
    (!name.is_empty()).then_some(name)
}

/// Asks threadpoolctl (a dependency of scikit-learn, present in most numerical Python
/// stacks) which BLAS and OpenMP libraries numpy and scipy load and which kernels they
/// chose. Prints `[]` when threadpoolctl is not installed.
const NUMERIC_PROBE: &str = r#"
import json
try:
    import threadpoolctl
except ImportError:
    print("[]")
    raise SystemExit(0)
for m in ("numpy", "scipy.linalg"):
    try:
        __import__(m)
    except ImportError:
        pass
keys = ("user_api", "internal_api", "version", "architecture", "num_threads")
print(json.dumps([{k: i.get(k) for k in keys} for i in threadpoolctl.threadpool_info()]))
"#;

/// The numerical libraries of the Python runtime at `python`, run with `env` (the same
/// variables the scenarios run with, so the thread counts are the scenarios' own). Empty
/// when the probe fails: where evidence came from is information, not a gate.
pub async fn numeric_libraries(
    python: &Path,
    env: &BTreeMap<String, String>,
) -> Vec<NumericLibrary> {
    let mut cmd = scimcp_process::python_command(python);
    cmd.args(["-c", NUMERIC_PROBE]).envs(env);
    let step = scimcp_process::Step::new("the numerical libraries probe", cmd)
        .timeout(Duration::from_secs(60));
    let out = tokio::task::spawn_blocking(move || scimcp_process::run(step)).await;
    match out {
        Ok(Ok(out)) if out.success() => {
            let mut libs: Vec<NumericLibrary> =
                serde_json::from_str(&out.stdout).unwrap_or_default();
            libs.sort_by(|a, b| {
                (&a.user_api, &a.internal_api).cmp(&(&b.user_api, &b.internal_api))
            });
            libs.dedup();
            libs
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_names_its_platform() {
        let m = Machine::this();
        assert_eq!(
            m.platform(),
            format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
        );
        let env = serde_json::json!({"probe": {"python": "3.11.7", "versions": {"numpy": "2.1.3", "x": null},
            "package": {"name": "refsci", "sha256": "abcdef0123456789"}}});
        let m = m.with_runtime(&env);
        let rt = m.runtime.as_ref().unwrap();
        assert_eq!(rt.libraries["numpy"].as_deref(), Some("2.1.3"));
        assert_eq!(rt.libraries["x"], None);
        assert!(
            m.summary().contains("runtime refsci abcdef012345…"),
            "{}",
            m.summary()
        );
    }
}
