//! One job's command line, by CWL v1.2 CommandLineTool §"Input binding" and §"Runtime
//! environment": `baseCommand`, then the `arguments` and the input bindings sorted by their
//! keys; the streams, environment, initial work directory, exit codes and resources, each
//! expression evaluated for this job. The tool is [`crate::norm`]'s canonical shape and the
//! job is filled ([`crate::inputs::fill`]) and staged: every File and Directory has its `path`.
//!
//! The ordering follows the spec's key rules the way the reference runner (cwltool) applies
//! them, since the conformance tests encode that reading: a binding's key is its position
//! list (`[position, name]` for an input, `[position, index]` for an argument), nested
//! bindings of arrays and records append their own, and integers sort before strings.

mod bind;
mod workdir;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::CwlError;
use crate::expr::{Context, Expressions};

pub use workdir::WorkdirEntry;

/// What to run for one job.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandLine {
    /// `baseCommand` then the sorted bindings; `argv[0]` is the program.
    pub argv: Vec<String>,
    /// ShellCommandRequirement is in force: `argv` holds the pieces, each quoted unless its
    /// binding says `shellQuote: false`, to be joined with spaces for `sh -c`.
    pub shell: bool,
    /// The file to feed on stdin (a path).
    pub stdin: Option<String>,
    /// The file name in the output directory that stdout goes to.
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    /// EnvVarRequirement, evaluated (hints first, requirements over them).
    pub env: BTreeMap<String, String>,
    /// InitialWorkDirRequirement, evaluated.
    pub workdir: Vec<WorkdirEntry>,
    pub success_codes: Vec<i32>,
    pub temporary_fail_codes: Vec<i32>,
    pub permanent_fail_codes: Vec<i32>,
    /// ResourceRequirement `coresMin` (else `coresMax`).
    pub cores: Option<f64>,
    /// ResourceRequirement `ramMin` (else `ramMax`), in MiB.
    pub ram_mb: Option<f64>,
    /// ToolTimeLimit `timelimit` in seconds; `None` for no limit (absent or 0).
    pub time_limit_s: Option<u64>,
    /// NetworkAccess `networkAccess`.
    pub network: bool,
}

/// Build the command line of `job` (filled inputs) for `tool` (normalized); `runtime` is the
/// CWL `runtime` object (`outdir`, `tmpdir`, `cores`, `ram`, `outdirSize`, `tmpdirSize`).
pub fn build(
    tool: &Value,
    job: &Value,
    runtime: &Value,
    exprs: &Expressions,
) -> Result<CommandLine, CwlError> {
    // The initial work directory comes first: the files it places are where the rest of the
    // command (bindings, streams, environment) finds them.
    let workdir = workdir::entries(&Builder {
        tool,
        job,
        runtime,
        exprs,
    })?;
    let outdir = runtime.get("outdir").and_then(Value::as_str).unwrap_or(".");
    let placed = workdir::placed(&workdir, outdir);
    let mut moved;
    let job = if placed.is_empty() {
        job
    } else {
        moved = job.clone();
        workdir::relocate_placed(&mut moved, &placed);
        &moved
    };
    let b = Builder {
        tool,
        job,
        runtime,
        exprs,
    };
    let shell = b.requirement("ShellCommandRequirement").is_some();
    let mut pieces: Vec<(String, bool)> = Vec::new();
    for (i, c) in list(tool, "baseCommand").iter().enumerate() {
        let c = c
            .as_str()
            .ok_or_else(|| command_error(format!("baseCommand[{i}]"), "not a string"))?;
        pieces.push((c.to_string(), true));
    }
    pieces.extend(bind::arguments(&b)?);
    let argv = if shell {
        pieces
            .into_iter()
            .map(|(p, quote)| if quote { shell_quote(&p) } else { p })
            .collect()
    } else {
        pieces.into_iter().map(|(p, _)| p).collect()
    };
    Ok(CommandLine {
        argv,
        shell,
        stdin: b.stream("stdin")?,
        stdout: b.output_stream("stdout")?,
        stderr: b.output_stream("stderr")?,
        env: b.env()?,
        workdir,
        success_codes: codes(tool, "successCodes")?,
        temporary_fail_codes: codes(tool, "temporaryFailCodes")?,
        permanent_fail_codes: codes(tool, "permanentFailCodes")?,
        cores: b.resource("cores")?,
        ram_mb: b.resource("ram")?,
        time_limit_s: b.time_limit()?,
        network: b.network()?,
    })
}

/// What every part of the build reads.
pub(crate) struct Builder<'a> {
    pub tool: &'a Value,
    pub job: &'a Value,
    pub runtime: &'a Value,
    pub exprs: &'a Expressions,
}

impl Builder<'_> {
    /// Evaluate `v` (only a string is an expression) with `self` = `self_`.
    pub(crate) fn eval(&self, field: &str, v: &Value, self_: &Value) -> Result<Value, CwlError> {
        let ctx = Context {
            inputs: self.job,
            self_,
            runtime: self.runtime,
        };
        self.exprs
            .eval_value(v, &ctx)
            .map_err(|e| command_error(field.to_string(), e.to_string()))
    }

    /// The requirement of this class: `requirements` win over `hints`.
    pub(crate) fn requirement(&self, class: &str) -> Option<&Map<String, Value>> {
        let find = |key: &str| {
            list(self.tool, key)
                .iter()
                .rev()
                .filter_map(Value::as_object)
                .find(|r| r.get("class").and_then(Value::as_str) == Some(class))
        };
        find("requirements").or_else(|| find("hints"))
    }

    fn stream(&self, key: &str) -> Result<Option<String>, CwlError> {
        let Some(v) = self.tool.get(key).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        match self.eval(key, v, &Value::Null)? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            Value::Object(o) if o.get("path").is_some_and(Value::is_string) => {
                Ok(o.get("path").and_then(Value::as_str).map(str::to_string))
            }
            other => Err(command_error(
                key.to_string(),
                format!("must give a string, not {other}"),
            )),
        }
    }

    /// `stdout`/`stderr`: a file name inside the output directory.
    fn output_stream(&self, key: &str) -> Result<Option<String>, CwlError> {
        let name = self.stream(key)?;
        if let Some(n) = &name {
            let p = std::path::Path::new(n);
            if n.is_empty()
                || p.is_absolute()
                || p.components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
            {
                return Err(command_error(
                    key.to_string(),
                    format!("`{n}` is not a file name inside the output directory"),
                ));
            }
        }
        Ok(name)
    }

    fn env(&self) -> Result<BTreeMap<String, String>, CwlError> {
        let mut env = BTreeMap::new();
        // Hints first so requirements override them, as the spec ranks them.
        for key in ["hints", "requirements"] {
            for r in list(self.tool, key) {
                if r.get("class").and_then(Value::as_str) != Some("EnvVarRequirement") {
                    continue;
                }
                let defs: Vec<(String, Value)> = match r.get("envDef") {
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(|d| {
                            let name =
                                d.get("envName").and_then(Value::as_str).ok_or_else(|| {
                                    command_error(
                                        "EnvVarRequirement.envDef".into(),
                                        format!("an entry without `envName`: {d}"),
                                    )
                                })?;
                            Ok((
                                name.to_string(),
                                d.get("envValue").cloned().unwrap_or(Value::Null),
                            ))
                        })
                        .collect::<Result<_, CwlError>>()?,
                    Some(Value::Object(map)) => map
                        .iter()
                        .map(|(k, v)| {
                            let v = match v {
                                Value::Object(o) => {
                                    o.get("envValue").cloned().unwrap_or(Value::Null)
                                }
                                other => other.clone(),
                            };
                            (k.clone(), v)
                        })
                        .collect(),
                    _ => {
                        return Err(command_error(
                            "EnvVarRequirement.envDef".into(),
                            "must be a list of {envName, envValue} or a map",
                        ));
                    }
                };
                for (name, value) in defs {
                    let field = format!("EnvVarRequirement.envDef.{name}");
                    let v = self.eval(&field, &value, &Value::Null)?;
                    env.insert(name, to_text(&field, &v)?);
                }
            }
        }
        Ok(env)
    }

    fn resource(&self, what: &str) -> Result<Option<f64>, CwlError> {
        let Some(r) = self.requirement("ResourceRequirement") else {
            return Ok(None);
        };
        for key in [format!("{what}Min"), format!("{what}Max")] {
            let Some(v) = r.get(&key).filter(|v| !v.is_null()) else {
                continue;
            };
            let field = format!("ResourceRequirement.{key}");
            return match self.eval(&field, v, &Value::Null)? {
                Value::Null => Ok(None),
                Value::Number(n) if n.as_f64().is_some_and(|f| f >= 0.0) => Ok(n.as_f64()),
                other => Err(command_error(
                    field,
                    format!("must be a non-negative number, not {other}"),
                )),
            };
        }
        Ok(None)
    }

    fn time_limit(&self) -> Result<Option<u64>, CwlError> {
        let Some(v) = self
            .requirement("ToolTimeLimit")
            .and_then(|r| r.get("timelimit"))
        else {
            return Ok(None);
        };
        let field = "ToolTimeLimit.timelimit";
        match self.eval(field, v, &Value::Null)? {
            Value::Number(n) => match n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            }) {
                Some(0) => Ok(None),
                Some(s) => Ok(Some(s)),
                None => Err(command_error(
                    field.into(),
                    format!("must be a whole number of seconds >= 0, not {n}"),
                )),
            },
            other => Err(command_error(
                field.into(),
                format!("must be a number of seconds, not {other}"),
            )),
        }
    }

    fn network(&self) -> Result<bool, CwlError> {
        let Some(v) = self
            .requirement("NetworkAccess")
            .and_then(|r| r.get("networkAccess"))
        else {
            return Ok(false);
        };
        match self.eval("NetworkAccess.networkAccess", v, &Value::Null)? {
            Value::Bool(b) => Ok(b),
            other => Err(command_error(
                "NetworkAccess.networkAccess".into(),
                format!("must be true or false, not {other}"),
            )),
        }
    }
}

/// A normalized list field of the tool (absent is empty).
pub(crate) fn list<'a>(tool: &'a Value, key: &str) -> &'a [Value] {
    tool.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn codes(tool: &Value, key: &str) -> Result<Vec<i32>, CwlError> {
    list(tool, key)
        .iter()
        .map(|c| {
            c.as_i64()
                .and_then(|c| i32::try_from(c).ok())
                .ok_or_else(|| command_error(key.to_string(), format!("`{c}` is not an exit code")))
        })
        .collect()
}

pub(crate) fn command_error(field: String, message: impl Into<String>) -> CwlError {
    CwlError::Command {
        field,
        message: message.into(),
    }
}

/// A value as command-line text: strings as they are, File/Directory as their `path`, numbers
/// in plain decimal (never exponent notation: `0.0000123`, `123000`), anything else as JSON.
pub(crate) fn to_text(field: &str, v: &Value) -> Result<String, CwlError> {
    Ok(match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => number_text(n),
        Value::Object(o)
            if matches!(
                o.get("class").and_then(Value::as_str),
                Some("File" | "Directory")
            ) =>
        {
            o.get("path")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    command_error(
                        field.to_string(),
                        "a File or Directory without a `path` (the job was not filled and staged)",
                    )
                })?
                .to_string()
        }
        other => other.to_string(),
    })
}

/// Rust prints `f64` in the shortest round-trip form without an exponent, which is what the
/// conformance tests expect (`very_big_and_very_floats_nojs`), and whole floats without `.0`.
fn number_text(n: &serde_json::Number) -> String {
    if n.is_f64() {
        n.as_f64()
            .map(|f| f.to_string())
            .unwrap_or_else(|| n.to_string())
    } else {
        n.to_string()
    }
}

/// POSIX shell quoting (what `shellQuote: true` asks for): safe words as they are, anything
/// else in single quotes with `'` written as `'"'"'`.
pub(crate) fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_alphanumeric() || "@%+=:,./-_".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\"'\"'"))
    }
}
