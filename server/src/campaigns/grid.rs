//! Expanding a campaign's grid into its items, in a stated order.

use serde_json::{Map, Value};

use super::record::MAX_ITEMS;
use super::request::{CampaignGrid, CampaignItem};

/// How many items the grid expands to, computed from the lists' lengths alone; `None` when
/// the product overflows (which is above any limit).
pub fn size(grid: &CampaignGrid) -> Option<usize> {
    grid.vary
        .values()
        .map(Vec::len)
        .chain(grid.inputs.values().map(Vec::len))
        .try_fold(grid.datasets.len().max(1), usize::checked_mul)?
        .checked_mul(grid.parameter_sets.len().max(1))
}

/// Every dataset × every combination of the inputs × every parameter set × every
/// combination of the varied values (names sorted, the last changing fastest), each with
/// the fixed parameters; `Err` names a
/// parameter given twice for one item, or a grid above [`MAX_ITEMS`], refused before
/// anything is expanded: a few hundred bytes of `vary` lists can name more combinations than
/// memory holds.
pub fn expand(grid: &CampaignGrid) -> Result<Vec<CampaignItem>, String> {
    for (name, values) in &grid.vary {
        if values.is_empty() {
            return Err(format!("grid.vary.{name} lists no value"));
        }
    }
    for (id, refs) in &grid.inputs {
        if refs.is_empty() {
            return Err(format!("grid.inputs.{id} lists no reference"));
        }
    }
    if grid.datasets.is_empty() && grid.inputs.is_empty() {
        return Err(
            "the grid names no dataset and no input: give grid.datasets or grid.inputs".into(),
        );
    }
    match size(grid) {
        Some(n) if n <= MAX_ITEMS => {}
        n => {
            return Err(format!(
                "a campaign has 1 to {MAX_ITEMS} items; this grid expands to {}",
                n.map_or_else(
                    || "more than the machine can count".to_string(),
                    |n| n.to_string()
                )
            ));
        }
    }
    let sets: Vec<Map<String, Value>> = if grid.parameter_sets.is_empty() {
        vec![Map::new()]
    } else {
        grid.parameter_sets.clone()
    };
    let mut combos: Vec<Map<String, Value>> = vec![Map::new()];
    for (name, values) in &grid.vary {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.insert(name.clone(), v.clone());
                    c
                })
            })
            .collect();
    }
    // Inputs combine like varied values: input ids sorted, the last changing fastest.
    let mut input_combos: Vec<crate::inputs::RequestInputs> = vec![Default::default()];
    for (id, refs) in &grid.inputs {
        input_combos = input_combos
            .into_iter()
            .flat_map(|c| {
                refs.iter().map(move |r| {
                    let mut c = c.clone();
                    c.insert(id.clone(), r.clone());
                    c
                })
            })
            .collect();
    }
    let datasets: Vec<Option<String>> = if grid.datasets.is_empty() {
        vec![None]
    } else {
        grid.datasets.iter().cloned().map(Some).collect()
    };
    let mut items = Vec::new();
    for (dataset, inputs) in datasets
        .iter()
        .flat_map(|d| input_combos.iter().map(move |i| (d, i)))
    {
        for set in &sets {
            for combo in &combos {
                let mut parameters = grid.fixed.clone();
                for (k, v) in set.iter().chain(combo.iter()) {
                    if parameters.insert(k.clone(), v.clone()).is_some() {
                        return Err(format!(
                            "parameter '{k}' is given twice (fixed, a parameter set or vary): give each once"
                        ));
                    }
                }
                items.push(CampaignItem {
                    dataset: dataset.clone(),
                    inputs: inputs.clone(),
                    parameters,
                });
            }
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_grid_expands_in_order_and_refuses_a_parameter_given_twice() {
        let grid: CampaignGrid = serde_json::from_value(json!({
            "datasets": ["a", "b"],
            "parameter_sets": [{"model": "x"}, {"model": "y", "params": {"k": 1}}],
            "vary": {"seed": [0, 1, 2]},
            "fixed": {"target": "t"}
        }))
        .unwrap();
        let items = expand(&grid).unwrap();
        assert_eq!(items.len(), 12);
        assert_eq!(items[4].dataset.as_deref(), Some("a"));
        assert_eq!(
            Value::Object(items[4].parameters.clone()),
            json!({"model": "y", "params": {"k": 1}, "seed": 1, "target": "t"})
        );
        assert_eq!(items[11].dataset.as_deref(), Some("b"));
        let mut twice = grid.clone();
        twice.fixed.insert("seed".into(), json!(9));
        assert!(
            expand(&twice)
                .unwrap_err()
                .contains("'seed' is given twice")
        );
    }

    #[test]
    fn a_grid_varies_inputs_ligands_by_seeds() {
        let grid: CampaignGrid = serde_json::from_value(json!({
            "inputs": {"receptor": ["r.pdbqt"], "ligand": ["a.pdbqt", "b.pdbqt"]},
            "vary": {"seed": [1, 2, 3]},
            "fixed": {"exhaustiveness": 8}
        }))
        .unwrap();
        assert_eq!(size(&grid), Some(6));
        let items = expand(&grid).unwrap();
        assert_eq!(items.len(), 6);
        // Ligand is the outer loop, seed the inner; the receptor is on every item.
        let seen: Vec<(Value, Value)> = items
            .iter()
            .map(|i| {
                (
                    serde_json::to_value(&i.inputs["ligand"]).unwrap(),
                    i.parameters["seed"].clone(),
                )
            })
            .collect();
        assert_eq!(seen[0], (json!("a.pdbqt"), json!(1)));
        assert_eq!(seen[2], (json!("a.pdbqt"), json!(3)));
        assert_eq!(seen[3], (json!("b.pdbqt"), json!(1)));
        assert!(items.iter().all(|i| i.dataset.is_none()
            && serde_json::to_value(&i.inputs["receptor"]).unwrap() == json!("r.pdbqt")));
        let mut empty = grid.clone();
        empty.inputs.insert("ligand".into(), Vec::new());
        assert!(expand(&empty).unwrap_err().contains("grid.inputs.ligand"));
        let nothing: CampaignGrid = serde_json::from_value(json!({"vary": {"seed": [1]}})).unwrap();
        assert!(
            expand(&nothing)
                .unwrap_err()
                .contains("no dataset and no input")
        );
    }

    #[test]
    fn a_grid_above_the_limit_is_refused_from_its_lengths_alone() {
        // 10^8 combinations: expanding them first would need gigabytes.
        let vary: serde_json::Map<String, Value> = (0..8)
            .map(|k| (format!("p{k}"), json!((0..10).collect::<Vec<_>>())))
            .collect();
        let grid: CampaignGrid =
            serde_json::from_value(json!({"datasets": ["a"], "vary": vary})).unwrap();
        assert_eq!(size(&grid), Some(100_000_000));
        let refused = expand(&grid).unwrap_err();
        assert!(refused.contains("1 to 1000 items"), "{refused}");
        assert!(refused.contains("100000000"), "{refused}");
        // Overflowing products are refused too, not wrapped.
        let vary: serde_json::Map<String, Value> = (0..40)
            .map(|k| (format!("p{k}"), json!((0..10).collect::<Vec<_>>())))
            .collect();
        let huge: CampaignGrid =
            serde_json::from_value(json!({"datasets": ["a"], "vary": vary})).unwrap();
        assert_eq!(size(&huge), None);
        assert!(expand(&huge).unwrap_err().contains("more than"));
        // 1000 exactly is allowed.
        let ok: CampaignGrid = serde_json::from_value(
            json!({"datasets": ["a", "b"], "vary": {"s": (0..500).collect::<Vec<_>>()}}),
        )
        .unwrap();
        assert_eq!(expand(&ok).unwrap().len(), 1000);
    }
}
