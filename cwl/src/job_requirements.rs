//! A job's `cwl:requirements` (CWL v1.2 §"Requirements and hints": requirements given in the
//! input object apply as if listed in the tool's `requirements`, over the tool's own
//! requirements and hints of the same class). They reach the server as one more parameter,
//! [`PARAM`], are checked here against what a served tool may change per request, and make
//! the tool the engine builds this job's command from ([`effective_tool`]).
//!
//! What the server fixes when it loads a tool cannot come from a job: the program and its
//! shell, the container refusal, the sandbox's network, the parameter types. Those classes
//! are refused as they are in a tool, naming the job's field.

use serde_json::{Map, Value, json};

/// The request parameter that carries a job's `cwl:requirements` (a CWL input whose name
/// would be this one gets another: [`crate::engine`]'s names reserve it).
pub const PARAM: &str = "cwl_requirements";
/// The job field as a CWL job file spells it.
pub const JOB_FIELD: &str = "cwl:requirements";

/// Classes a job may set for its own run, each applied as the tool's requirement would be.
const PER_JOB: &[&str] = &[
    "EnvVarRequirement",
    "ResourceRequirement",
    "InitialWorkDirRequirement",
    "InlineJavascriptRequirement",
    "ToolTimeLimit",
    "LoadListingRequirement",
    "InplaceUpdateRequirement",
    // Informational, as in a tool.
    "SoftwareRequirement",
    "WorkReuse",
];

/// The parameter's schema in the tool's parameter schema.
pub fn schema() -> Value {
    json!({
        "type": "array",
        "description": "The CWL job's `cwl:requirements`: requirements for this run only, over the tool's own of the same class (EnvVarRequirement, ResourceRequirement, InitialWorkDirRequirement, InlineJavascriptRequirement, ToolTimeLimit, LoadListingRequirement, InplaceUpdateRequirement)",
        "items": {
            "type": "object",
            "properties": {"class": {"type": "string"}},
            "required": ["class"],
        },
    })
}

/// What the served tool fixed at load that a job's requirement must agree with.
#[derive(Debug, Clone, Copy)]
pub struct Served {
    /// The tool runs through `/bin/sh -c` (ShellCommandRequirement, allowed by the operator).
    pub shell: bool,
    /// The operator serves container tools from PATH (`--cwl-no-container`).
    pub no_container: bool,
}

/// What a plan says of a DockerRequirement served from PATH (`--cwl-no-container`), whether
/// the tool or the job asks for it: `at` names where.
pub(crate) fn container_note(at: &str, req: &Value) -> String {
    let image = ["dockerPull", "dockerImageId", "dockerFile", "dockerLoad"]
        .iter()
        .find_map(|k| req.get(*k).and_then(Value::as_str))
        .map(|i| format!(" `{}`", i.lines().next().unwrap_or(i)))
        .unwrap_or_default();
    format!(
        "{at}: the tool asks for the container{image}; this server runs it from PATH in its own sandbox instead (the operator's --cwl-no-container)"
    )
}

/// A refusal of one of the job's requirements: the parameter path and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `parameters.cwl_requirements[<i>]`
    pub field: String,
    pub message: String,
    pub hint: String,
}

/// The job's requirements from a request's parameters, each checked, in their order.
pub fn read(
    params: &Map<String, Value>,
    tool: &Value,
    served: Served,
) -> Result<Vec<Value>, Refusal> {
    let items = match params.get(PARAM) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(Refusal {
                field: format!("parameters.{PARAM}"),
                message: format!("`{JOB_FIELD}` must be a list of requirements, not {other}"),
                hint: "give a list of objects, each with its `class`".into(),
            });
        }
    };
    let mut out = Vec::new();
    for (i, req) in items.iter().enumerate() {
        let field = format!("parameters.{PARAM}[{i}]");
        let Some(class) = req.get("class").and_then(Value::as_str) else {
            return Err(Refusal {
                field,
                message: format!("`{JOB_FIELD}[{i}]` has no `class`: {req}"),
                hint: "give each requirement as an object with its `class`".into(),
            });
        };
        let named = format!("`{JOB_FIELD}[{i}]` ({class})");
        let refuse = |why: String, hint: &str| Refusal {
            field: field.clone(),
            message: format!("{named} is not supported by scimcp: {why}"),
            hint: hint.to_string(),
        };
        match class {
            c if PER_JOB.contains(&c) => {}
            // Served from PATH like the tool's own, said in the plan (engine.rs).
            "DockerRequirement" if served.no_container => {}
            "DockerRequirement" => {
                return Err(refuse(
                    "containers are not supported: scimcp runs the tool from PATH in its own sandbox, and a job cannot ask for one".into(),
                    "drop DockerRequirement from the job (or start the server with --cwl-no-container to run such jobs from PATH)",
                ));
            }
            "ShellCommandRequirement" if served.shell => {}
            "ShellCommandRequirement" => {
                return Err(refuse(
                    "the tool is served without a shell: its program is resolved and hashed when the server starts, so only the tool's own ShellCommandRequirement (on a server started with --cwl-allow-shell) runs it through /bin/sh -c".into(),
                    "drop ShellCommandRequirement from the job",
                ));
            }
            "NetworkAccess" if network_of(req) == tool_network(tool) => {}
            "NetworkAccess" => {
                return Err(refuse(
                    format!(
                        "the run's network is the sandbox's, fixed when the tool is loaded (network {} for this tool)",
                        if tool_network(tool) {
                            "granted"
                        } else {
                            "denied"
                        }
                    ),
                    "drop NetworkAccess from the job, or change the tool's own NetworkAccess",
                ));
            }
            "SchemaDefRequirement" => {
                return Err(refuse(
                    "the tool's types are its parameter schema, fixed when the tool is loaded"
                        .into(),
                    "drop SchemaDefRequirement from the job; define the types in the tool",
                ));
            }
            other => {
                return Err(refuse(
                    format!("the requirement {other} is not supported"),
                    "drop it from the job",
                ));
            }
        }
        out.push(req.clone());
    }
    Ok(out)
}

/// `tool` with the job's requirements in `requirements`, each replacing the tool's
/// requirements and hints of its class (a later one of a class over an earlier one).
pub fn effective_tool(tool: &Value, reqs: &[Value]) -> Value {
    if reqs.is_empty() {
        return tool.clone();
    }
    let classes: Vec<&str> = reqs
        .iter()
        .filter_map(|r| r.get("class").and_then(Value::as_str))
        .collect();
    let mut t = tool.clone();
    for key in ["requirements", "hints"] {
        if let Some(Value::Array(list)) = t.get_mut(key) {
            list.retain(|r| {
                !r.get("class")
                    .and_then(Value::as_str)
                    .is_some_and(|c| classes.contains(&c))
            });
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut own: Vec<Value> = reqs
        .iter()
        .rev()
        .filter(|r| seen.insert(r.get("class").and_then(Value::as_str).unwrap_or("")))
        .cloned()
        .collect();
    own.reverse();
    match t.get_mut("requirements") {
        Some(Value::Array(list)) => list.extend(own),
        _ => t["requirements"] = Value::Array(own),
    }
    t
}

/// Whether JavaScript is on for this job, and its expression library: the job's
/// InlineJavascriptRequirement replaces the tool's.
pub fn javascript(reqs: &[Value], tool_js: bool, tool_lib: &[String]) -> (bool, Vec<String>) {
    let Some(js) = reqs
        .iter()
        .rev()
        .find(|r| r.get("class").and_then(Value::as_str) == Some("InlineJavascriptRequirement"))
    else {
        return (tool_js, tool_lib.to_vec());
    };
    let lib = js
        .get("expressionLib")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    (true, lib)
}

fn network_of(req: &Value) -> bool {
    match req.get("networkAccess") {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) if !crate::expr::has_expression(s) => s == "true",
        // An expression: the tool's sandbox grants the network for it.
        Some(Value::String(_)) => true,
        _ => false,
    }
}

/// The network the tool's sandbox has (any NetworkAccess granting it, as at load).
fn tool_network(tool: &Value) -> bool {
    ["requirements", "hints"].iter().any(|key| {
        tool.get(*key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|r| r.get("class").and_then(Value::as_str) == Some("NetworkAccess"))
            .any(network_of)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(reqs: Value) -> Map<String, Value> {
        json!({"x": 1, PARAM: reqs}).as_object().unwrap().clone()
    }

    const SERVED: Served = Served {
        shell: false,
        no_container: false,
    };

    #[test]
    fn a_job_requirement_replaces_the_tools_of_its_class_and_adds_the_others() {
        let tool = json!({
            "requirements": [{"class": "EnvVarRequirement", "envDef": [{"envName": "A", "envValue": "tool"}]}],
            "hints": [{"class": "ResourceRequirement", "coresMin": 1}, {"class": "WorkReuse"}],
        });
        let reqs = read(
            &params(json!([
                {"class": "EnvVarRequirement", "envDef": [{"envName": "A", "envValue": "job"}]},
                {"class": "ResourceRequirement", "coresMin": 3},
            ])),
            &tool,
            SERVED,
        )
        .unwrap();
        let t = effective_tool(&tool, &reqs);
        assert_eq!(t["hints"], json!([{"class": "WorkReuse"}]), "{t:#}");
        assert_eq!(t["requirements"].as_array().unwrap().len(), 2, "{t:#}");
        assert_eq!(t["requirements"][0]["envDef"][0]["envValue"], "job");
        assert_eq!(t["requirements"][1]["coresMin"], 3);
        // No job requirements: the tool as it is.
        assert_eq!(effective_tool(&tool, &[]), tool);
        assert!(
            read(&params(Value::Null), &tool, SERVED)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn what_a_served_tool_fixes_at_load_is_refused_from_a_job_naming_its_field() {
        let tool = json!({"requirements": []});
        for (req, says) in [
            (
                json!({"class": "DockerRequirement", "dockerPull": "alpine"}),
                "containers",
            ),
            (
                json!({"class": "ShellCommandRequirement"}),
                "without a shell",
            ),
            (
                json!({"class": "NetworkAccess", "networkAccess": true}),
                "network denied",
            ),
            (
                json!({"class": "SchemaDefRequirement", "types": []}),
                "parameter schema",
            ),
            (
                json!({"class": "ScatterFeatureRequirement"}),
                "is not supported",
            ),
        ] {
            let e = read(
                &params(json!([{"class": "EnvVarRequirement", "envDef": []}, req])),
                &tool,
                SERVED,
            )
            .unwrap_err();
            assert_eq!(e.field, "parameters.cwl_requirements[1]");
            assert!(
                e.message.contains("`cwl:requirements[1]`") && e.message.contains(says),
                "{}",
                e.message
            );
        }
        let e = read(&params(json!([{"envDef": []}])), &tool, SERVED).unwrap_err();
        assert!(e.message.contains("no `class`"), "{}", e.message);
        let e = read(
            &params(json!({"class": "EnvVarRequirement"})),
            &tool,
            SERVED,
        )
        .unwrap_err();
        assert!(e.message.contains("must be a list"), "{}", e.message);
        // What agrees with the served tool is accepted.
        let shell = read(
            &params(json!([{"class": "ShellCommandRequirement"}])),
            &tool,
            Served {
                shell: true,
                no_container: false,
            },
        );
        assert!(shell.is_ok(), "{shell:?}");
        let same = read(
            &params(json!([{"class": "NetworkAccess", "networkAccess": false}])),
            &tool,
            SERVED,
        );
        assert!(same.is_ok(), "{same:?}");
    }

    #[test]
    fn a_job_can_turn_javascript_on_with_its_own_library() {
        assert_eq!(javascript(&[], false, &[]), (false, vec![]));
        let reqs =
            [json!({"class": "InlineJavascriptRequirement", "expressionLib": ["var k = 1;"]})];
        assert_eq!(
            javascript(&reqs, false, &["var t = 0;".to_string()]),
            (true, vec!["var k = 1;".to_string()])
        );
    }
}
