//! How the engine lays out a job's staged files (the server's side is simulated: each group's
//! files are copied to `inputs/<group>/<source name>`, as the server does).

use std::path::{Path, PathBuf};

use scimcp_core::manifest::{CommandEngine, StagedGroup};
use serde_json::{Map, Value, json};

fn suite(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/cwl/tests")
        .join(name)
}

fn staged_as_the_server_does(
    engine: &dyn CommandEngine,
    params: &Map<String, Value>,
) -> Vec<StagedGroup> {
    engine
        .stage(params)
        .unwrap()
        .into_iter()
        .map(|g| StagedGroup {
            files: g
                .paths
                .iter()
                .map(|p| {
                    let name = Path::new(p)
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    (PathBuf::from(p), format!("inputs/{}/{name}", g.id))
                })
                .collect(),
            id: g.id,
            kind: g.kind,
            dir: None,
        })
        .collect()
}

/// command_input_file_expression: a secondary file the tool renames must be the only copy of
/// it in its primary's directory (`ls $(inputs.x.dirname)` lists the primary and the
/// secondary under its CWL name, not the copy under the source's name as well).
#[test]
fn a_renamed_secondary_file_leaves_no_copy_under_its_source_name_beside_the_primary() {
    let tool = suite("secondaryfiles/rename-inputs.cwl");
    // Set field by field so the test reads the same whatever other options there are.
    #[allow(clippy::field_reassign_with_default)]
    let options = {
        let mut o = scimcp_cwl::EngineOptions::default();
        o.allow_shell = true;
        o
    };
    let (_, engine) = scimcp_cwl::engine::load_engine(&tool, options).unwrap();
    let file =
        |name: &str| json!({"class": "File", "path": suite(&format!("secondaryfiles/{name}"))});
    let job = json!({"inputWithSecondary": file("secondary_file_test.txt"),
                     "accessory": file("secondary_file_test.txt.accessory")});
    let params = engine.names.params(job.as_object().unwrap());
    let staged = staged_as_the_server_does(engine.as_ref(), &params);
    let c = engine.command(&params, &staged).unwrap();
    let line = c.args.join(" ");
    // `sh -c "ls '<dirname>' | grep secondary"`
    let dirname = line.split('\'').nth(1).unwrap_or_default().to_string();
    // What is in the primary's directory: the copies the server makes there and the links.
    let mut there: Vec<String> = staged
        .iter()
        .flat_map(|g| g.files.iter().map(|(_, run)| format!("{{work_dir}}/{run}")))
        .chain(c.links.iter().map(|l| l.to.clone()))
        .filter_map(|p| {
            let (dir, name) = p.rsplit_once('/')?;
            (dir == dirname).then(|| name.to_string())
        })
        .collect();
    there.sort();
    assert_eq!(
        there,
        ["secondary_file_test.accessory", "secondary_file_test.txt"],
        "{line}\n{:#?}",
        c.links
    );
}
