//! The operator's Slurm settings (`scimcp serve --executor slurm --slurm-config FILE`):
//! partition, account, QOS and extra `sbatch` options, each checked before the server starts
//! so that nothing a client sends, and nothing malformed an operator wrote, reaches `sbatch`.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `sbatch` long options an operator may add. Everything the executor sets itself (output
/// files, working directory, environment, arrays, time, memory, CPUs, requeueing, signals)
/// and everything that changes who runs the job or when it starts is left out on purpose.
pub const ALLOWED_DIRECTIVES: &[&str] = &[
    "comment",
    "constraint",
    "cores-per-socket",
    "cpus-per-gpu",
    "exclude",
    "exclusive",
    "gpus",
    "gpus-per-node",
    "gpus-per-task",
    "gres",
    "hint",
    "licenses",
    "mail-type",
    "mail-user",
    "mem-per-gpu",
    "nice",
    "nodelist",
    "prefer",
    "reservation",
    "sockets-per-node",
    "switches",
    "threads-per-core",
    "tmp",
    "wckey",
];

/// The Slurm executor's configuration, as written in its TOML file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlurmConfig {
    /// `--partition`; default: the cluster's default partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// `--account`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// `--qos`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    /// Extra `sbatch` options, `--name` or `--name=value`, names from [`ALLOWED_DIRECTIVES`].
    #[serde(default)]
    pub directives: Vec<String>,
    /// Seconds between two status polls (one `squeue` for every tracked job).
    #[serde(default = "default_poll_interval_s")]
    pub poll_interval_s: f64,
    /// Seconds any one Slurm command (`sbatch`, `squeue`, `scancel`, `sinfo`) may take: a
    /// hung controller must not hang the server.
    #[serde(default = "default_command_timeout_s")]
    pub command_timeout_s: u64,
    /// The `scimcp` binary as the compute nodes see it (default: this server's own binary,
    /// which must then be on a shared file system).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub scimcp: Option<PathBuf>,
}

fn default_poll_interval_s() -> f64 {
    2.0
}

fn default_command_timeout_s() -> u64 {
    30
}

impl Default for SlurmConfig {
    fn default() -> Self {
        SlurmConfig {
            partition: None,
            account: None,
            qos: None,
            directives: Vec::new(),
            poll_interval_s: default_poll_interval_s(),
            command_timeout_s: default_command_timeout_s(),
            scimcp: None,
        }
    }
}

/// Why the operator's Slurm configuration cannot be used. Each message names the file; an
/// invalid one lists every problem and the directives that are allowed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read (the message names it and says why).
    #[error(transparent)]
    Read(#[from] std::io::Error),
    #[error("{}: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    // The hint stays in the message: the server reports this through anyhow, where a
    // `Hint` of this crate's type is out of reach.
    #[error(
        "{}: {}\nhint: allowed directives: {}",
        path.display(),
        problems.join("; "),
        ALLOWED_DIRECTIVES.join(", ")
    )]
    Invalid {
        path: PathBuf,
        problems: Vec<String>,
    },
}

/// Why one `sbatch` option of the configuration is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectiveError {
    #[error("write the long form, e.g. --constraint=avx2")]
    NotLongForm,
    #[error(
        "'{name}' is not an allowed sbatch option (the executor sets output, working directory, environment, time, memory, CPUs and arrays itself)"
    )]
    NotAllowed { name: String },
    #[error("the value must be 1-256 characters")]
    ValueLength,
    #[error(
        "the value contains {bad:?}; only letters, digits and _ . , : = + @ % / - [ ] are allowed"
    )]
    ValueCharacter { bad: char },
}

impl SlurmConfig {
    /// Read and check `path`; every problem is listed.
    pub fn load(path: &Path) -> Result<SlurmConfig, ConfigError> {
        let text = fs_err::read_to_string(path)?;
        let config: SlurmConfig = toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.to_path_buf(),
            source,
        })?;
        config.check().map_err(|problems| ConfigError::Invalid {
            path: path.to_path_buf(),
            problems,
        })?;
        Ok(config)
    }

    /// Every problem of the configuration, or nothing.
    pub fn check(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        for (key, value) in [
            ("partition", &self.partition),
            ("account", &self.account),
            ("qos", &self.qos),
        ] {
            if let Some(v) = value
                && !is_name(v)
            {
                problems.push(format!(
                    "{key} = {v:?}: use 1-64 letters, digits, '_', '.' or '-'"
                ));
            }
        }
        for d in &self.directives {
            if let Err(why) = check_directive(d) {
                problems.push(format!("directive {d:?}: {why}"));
            }
        }
        if !(self.poll_interval_s.is_finite() && (0.2..=60.0).contains(&self.poll_interval_s)) {
            problems.push(format!(
                "poll_interval_s = {} is outside 0.2..=60",
                self.poll_interval_s
            ));
        }
        if !(1..=600).contains(&self.command_timeout_s) {
            problems.push(format!(
                "command_timeout_s = {} is outside 1..=600",
                self.command_timeout_s
            ));
        }
        if let Some(p) = &self.scimcp
            && !p.is_absolute()
        {
            problems.push(format!(
                "scimcp = {:?} must be an absolute path",
                p.display()
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

fn is_name(v: &str) -> bool {
    (1..=64).contains(&v.len())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// `--name` or `--name=value`, the name allowed, the value free of anything a shell, a
/// batch script or Slurm's own option parser would treat specially.
pub fn check_directive(d: &str) -> Result<(), DirectiveError> {
    let Some(body) = d.strip_prefix("--") else {
        return Err(DirectiveError::NotLongForm);
    };
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    if !ALLOWED_DIRECTIVES.contains(&name) {
        return Err(DirectiveError::NotAllowed {
            name: name.to_string(),
        });
    }
    if let Some(v) = value {
        let safe = |c: char| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '_' | '.' | ',' | ':' | '=' | '+' | '@' | '%' | '/' | '-' | '[' | ']'
                )
        };
        if v.is_empty() || v.len() > 256 {
            return Err(DirectiveError::ValueLength);
        }
        if let Some(bad) = v.chars().find(|c| !safe(*c)) {
            return Err(DirectiveError::ValueCharacter { bad });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_are_allowlisted_and_values_plain() {
        assert!(check_directive("--constraint=avx2").is_ok());
        assert!(check_directive("--exclusive").is_ok());
        assert!(check_directive("--nodelist=node[1-4]").is_ok());
        for bad in [
            "--output=/etc/passwd",
            "--wrap=rm -rf /",
            "--export=ALL",
            "--array=0-9",
            "-C avx2",
            "--constraint=a;b",
            "--constraint=$(id)",
            "--comment=two words",
            "--comment=a\nb",
            "--constraint=",
        ] {
            assert!(check_directive(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn a_configuration_lists_every_problem() {
        let config = SlurmConfig {
            partition: Some("debug;rm".into()),
            qos: Some(String::new()),
            directives: vec!["--chdir=/".into(), "--gres=gpu:1".into()],
            poll_interval_s: 0.0,
            ..SlurmConfig::default()
        };
        let problems = config.check().unwrap_err();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(SlurmConfig::default().check().is_ok());
        let parsed: SlurmConfig =
            toml::from_str("partition = \"short\"\ndirectives = [\"--constraint=avx2\"]\n")
                .unwrap();
        assert_eq!(parsed.partition.as_deref(), Some("short"));
        assert!(toml::from_str::<SlurmConfig>("partiton = \"x\"").is_err());
    }
}
