//! Expanding a campaign's grid into its items, in a stated order.

use serde_json::{Map, Value};

use super::request::{CampaignGrid, CampaignItem};

/// Every dataset × every parameter set × every combination of the varied values (names
/// sorted, the last changing fastest), each with the fixed parameters; `Err` names a
/// parameter given twice for one item.
pub fn expand(grid: &CampaignGrid) -> Result<Vec<CampaignItem>, String> {
    let sets: Vec<Map<String, Value>> = if grid.parameter_sets.is_empty() {
        vec![Map::new()]
    } else {
        grid.parameter_sets.clone()
    };
    let mut combos: Vec<Map<String, Value>> = vec![Map::new()];
    for (name, values) in &grid.vary {
        if values.is_empty() {
            return Err(format!("grid.vary.{name} lists no value"));
        }
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
    let mut items = Vec::new();
    for dataset in &grid.datasets {
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
        assert_eq!(items[4].dataset, "a");
        assert_eq!(
            Value::Object(items[4].parameters.clone()),
            json!({"model": "y", "params": {"k": 1}, "seed": 1, "target": "t"})
        );
        assert_eq!(items[11].dataset, "b");
        let mut twice = grid.clone();
        twice.fixed.insert("seed".into(), json!(9));
        assert!(
            expand(&twice)
                .unwrap_err()
                .contains("'seed' is given twice")
        );
    }
}
