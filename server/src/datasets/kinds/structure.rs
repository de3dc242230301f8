//! Molecular structures: PDB and mmCIF through pdbtbx, PDBQT by its fixed columns.
//!
//! PDBQT (AutoDock's format) is PDB's atom records with columns 71-76 holding the partial
//! charge and 78-79 the AutoDock atom type (`OA`, `HD`, `A` for an aromatic carbon…), where
//! PDB has the element at 77-78 and the formal charge at 79-80. pdbtbx reads those columns
//! as PDB's, so it would take `OA` for element `O`, `A` for no element and the type's second
//! letter for a charge; and PDBQT's `ROOT`/`BRANCH`/`TORSDOF` records are not PDB. PDBQT is
//! therefore read here, line by line, with the element derived from the AutoDock type.
//!
//! The facts are those of the first model (a docking output's best pose, a receptor's only
//! model); `models` counts them all.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};

use schemars::JsonSchema;
use serde::Serialize;

use super::error::ContentError;
use super::shown::shown;
/// Chain ids listed.
const SHOWN_CHAINS: usize = 100;
/// Longest line kept of a PDBQT file; the rest of a longer line is skipped.
const MAX_LINE: usize = 1024;
/// The largest PDB or mmCIF file handed to pdbtbx.
const MAX_PDBTBX_BYTES: u64 = 64 << 20;

/// What a PDB, PDBQT or mmCIF file holds.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StructureFacts {
    pub models: u64,
    /// Chains of the first model.
    pub chain_count: u64,
    /// The first model's chain ids in file order (at most 100; a blank id is "").
    pub chains: Vec<String>,
    pub residues: u64,
    pub atoms: u64,
    /// HETATM records (ligands, waters, ions) of the first model.
    pub hetatm: u64,
    /// Atoms per element in the first model.
    pub elements: BTreeMap<String, u64>,
    /// The first model's coordinates' bounding box (a docking search box is set from it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounding_box: Option<BoundingBox>,
    /// PDBQT: the ligand's rotatable bonds (`TORSDOF`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torsions: Option<u32>,
}

/// An axis-aligned box around coordinates, in the file's units (Å).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BoundingBox {
    pub min: [f64; 3],
    pub max: [f64; 3],
    pub center: [f64; 3],
    pub size: [f64; 3],
}

/// Facts gathered atom by atom.
#[derive(Debug, Default)]
struct Tally {
    atoms: u64,
    hetatm: u64,
    residues: u64,
    last_residue: Option<(String, String)>,
    chains: Vec<String>,
    seen_chains: std::collections::HashSet<String>,
    chain_count: u64,
    elements: BTreeMap<String, u64>,
    min: [f64; 3],
    max: [f64; 3],
}

impl Tally {
    fn atom(&mut self, chain: &str, residue: &str, element: &str, hetero: bool, pos: [f64; 3]) {
        if self.seen_chains.insert(chain.to_string()) {
            self.chain_count += 1;
            if self.chains.len() < SHOWN_CHAINS {
                self.chains.push(chain.to_string());
            }
        }
        let key = (chain.to_string(), residue.to_string());
        if self.last_residue.as_ref() != Some(&key) {
            self.residues += 1;
            self.last_residue = Some(key);
        }
        if self.atoms == 0 {
            self.min = pos;
            self.max = pos;
        }
        for (axis, v) in pos.iter().enumerate() {
            self.min[axis] = self.min[axis].min(*v);
            self.max[axis] = self.max[axis].max(*v);
        }
        self.atoms += 1;
        if hetero {
            self.hetatm += 1;
        }
        let element = if element.is_empty() { "?" } else { element };
        *self.elements.entry(element.to_string()).or_default() += 1;
    }

    fn facts(self, models: u64, torsions: Option<u32>) -> StructureFacts {
        let round = |v: f64| (v * 1000.0).round() / 1000.0;
        let bounding_box = (self.atoms > 0).then(|| BoundingBox {
            min: self.min.map(round),
            max: self.max.map(round),
            center: [0, 1, 2].map(|i| round((self.min[i] + self.max[i]) / 2.0)),
            size: [0, 1, 2].map(|i| round(self.max[i] - self.min[i])),
        });
        StructureFacts {
            models,
            chain_count: self.chain_count,
            chains: self.chains,
            residues: self.residues,
            atoms: self.atoms,
            hetatm: self.hetatm,
            elements: self.elements,
            bounding_box,
            torsions,
        }
    }
}

/// Does this text (a file's first bytes) look like PDBQT rather than PDB?
pub fn looks_like_pdbqt(text: &str) -> bool {
    text.lines().any(|l| {
        ["ROOT", "ENDROOT", "BRANCH", "TORSDOF"]
            .iter()
            .any(|r| l.starts_with(r))
            || ((l.starts_with("ATOM  ") || l.starts_with("HETATM"))
                && autodock_columns(l).is_some())
    })
}

/// A PDBQT atom line's partial charge (columns 71-76) and AutoDock type (78-79).
fn autodock_columns(line: &str) -> Option<(f64, &str)> {
    let charge = line.get(70..76)?.trim().parse::<f64>().ok()?;
    let kind = line.get(77..)?.trim();
    (!kind.is_empty() && kind.len() <= 2 && kind.chars().all(|c| c.is_ascii_alphanumeric()))
        .then_some((charge, kind))
}

/// The element an AutoDock atom type stands for.
fn autodock_element(kind: &str) -> String {
    let upper = kind.to_ascii_uppercase();
    let element = match upper.as_str() {
        "A" => "C",
        "NA" | "NS" => "N",
        "OA" | "OS" | "W" => "O",
        "SA" => "S",
        "HD" | "HS" => "H",
        // Macrocycle glue atoms (G0-G9, CG0-CG9) are carbons.
        g if g.starts_with('G') || g.starts_with("CG") => "C",
        _ => "",
    };
    if !element.is_empty() {
        return element.to_string();
    }
    element_case(kind)
}

/// A PDB atom line's element: columns 77-78, else the atom name's first two columns
/// (where PDB right-justifies the element symbol).
fn pdb_element(line: &str) -> String {
    let given = line.get(76..78).unwrap_or_default().trim();
    if !given.is_empty() {
        return element_case(given);
    }
    let name = line.get(12..14).unwrap_or_default();
    element_case(
        &name
            .chars()
            .filter(char::is_ascii_alphabetic)
            .collect::<String>(),
    )
}

/// `CL` → `Cl`.
fn element_case(symbol: &str) -> String {
    let mut chars = symbol.trim().chars();
    match chars.next() {
        Some(first) => first
            .to_ascii_uppercase()
            .to_string()
            .chars()
            .chain(chars.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// Read one line of at most [`MAX_LINE`] bytes into `line` (the rest of a longer one is
/// skipped); false at the end.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    line.clear();
    let n = reader
        .by_ref()
        .take(MAX_LINE as u64)
        .read_until(b'\n', line)?;
    if n == 0 {
        return Ok(false);
    }
    if n == MAX_LINE && line.last() != Some(&b'\n') {
        let mut rest = Vec::new();
        loop {
            rest.clear();
            let m = reader
                .by_ref()
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut rest)?;
            if m == 0 || rest.last() == Some(&b'\n') {
                break;
            }
        }
    }
    Ok(true)
}

/// A PDBQT file by its fixed columns.
pub fn pdbqt(reader: &mut impl BufRead) -> Result<StructureFacts, ContentError> {
    by_columns(reader, true)
}

/// A PDB file by its fixed columns (what a PDB file too large for pdbtbx gets).
pub fn pdb_by_columns(reader: &mut impl BufRead) -> Result<StructureFacts, ContentError> {
    by_columns(reader, false)
}

/// PDB or PDBQT atom records by their fixed columns, streamed: the element from PDB's
/// columns 77-78 (else the atom name's first two columns) or from PDBQT's AutoDock type.
fn by_columns(reader: &mut impl BufRead, pdbqt: bool) -> Result<StructureFacts, ContentError> {
    let format = if pdbqt { "PDBQT" } else { "PDB" };
    let mut tally = Tally::default();
    let mut models = 0u64;
    let mut torsions = None;
    let mut in_first_model = true;
    let mut saw_atoms = false;
    let mut buf = Vec::new();
    let mut number = 0u64;
    while next_line(reader, &mut buf)? {
        number += 1;
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        if line.starts_with("MODEL") {
            models += 1;
            in_first_model = models == 1;
        } else if let Some(rest) = line.strip_prefix("TORSDOF") {
            if in_first_model {
                torsions = rest.trim().parse().ok();
            }
        } else if line.starts_with("ATOM  ") || line.starts_with("HETATM") {
            saw_atoms = true;
            if !in_first_model {
                continue;
            }
            let coord = |range: std::ops::Range<usize>, axis: &str| {
                line.get(range.clone())
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        ContentError::Malformed(format!(
                            "line {number}: the {axis} coordinate (columns {}-{}) is not a number",
                            range.start + 1,
                            range.end
                        ))
                    })
            };
            let pos = [
                coord(30..38, "x")?,
                coord(38..46, "y")?,
                coord(46..54, "z")?,
            ];
            let chain = line.get(21..22).unwrap_or_default().trim();
            let residue = line.get(17..27).unwrap_or_default();
            let element = match autodock_columns(line) {
                Some((_, kind)) if pdbqt => autodock_element(kind),
                _ if !pdbqt => pdb_element(line),
                _ => {
                    return Err(ContentError::Malformed(format!(
                        "line {number}: no AutoDock atom type in columns 78-79 (a PDBQT atom line has its partial charge in 71-76 and its type in 78-79); prepare the file with Open Babel or Meeko, or name it .pdb if it is PDB"
                    )));
                }
            };
            tally.atom(chain, residue, &element, line.starts_with("HETATM"), pos);
        } else if line.starts_with("ENDMDL") {
            in_first_model = false;
        }
    }
    if !saw_atoms {
        return Err(ContentError::Malformed(format!(
            "no ATOM or HETATM record found; a {format} file lists its atoms on ATOM/HETATM lines"
        )));
    }
    Ok(tally.facts(models.max(1), torsions))
}

/// A PDB or mmCIF file through pdbtbx (loose: warnings are not errors), first model only:
/// pdbtbx refuses, even when loose, a file whose models' atoms differ in serial number or
/// name (every mmCIF ensemble from the PDB numbers atoms across models), so the models
/// are counted here from the records instead.
///
/// pdbtbx holds the whole structure (a few times the file's size), so a file above
/// [`MAX_PDBTBX_BYTES`] is read by its columns when it is PDB, and refused when mmCIF.
pub fn with_pdbtbx(reader: &mut impl BufRead, mmcif: bool) -> Result<StructureFacts, ContentError> {
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(MAX_PDBTBX_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PDBTBX_BYTES {
        if mmcif {
            return Err(ContentError::Malformed(format!(
                "mmCIF files above {} MiB are not described (the whole structure would be held in memory); inspect an extract, e.g. one model or chain",
                MAX_PDBTBX_BYTES >> 20
            )));
        }
        let mut rest = std::io::BufReader::new(std::io::Cursor::new(bytes).chain(reader));
        return pdb_by_columns(&mut rest);
    }
    let models = if mmcif {
        mmcif_models(&bytes)
    } else {
        bytes
            .split(|b| *b == b'\n')
            .filter(|l| l.starts_with(b"MODEL"))
            .count() as u64
    };
    let mut options = pdbtbx::ReadOptions::new();
    options
        .set_format(if mmcif {
            pdbtbx::Format::Mmcif
        } else {
            pdbtbx::Format::Pdb
        })
        .set_level(pdbtbx::StrictnessLevel::Loose)
        .set_only_first_model(true);
    let (pdb, _warnings) = options
        .read_raw(std::io::BufReader::new(std::io::Cursor::new(bytes)))
        .map_err(|errors| {
            let first: Vec<String> = errors
                .iter()
                .take(3)
                .map(|e| shown(&e.to_string(), 300))
                .collect();
            ContentError::Malformed(format!(
                "not a readable {} file: {}",
                if mmcif { "mmCIF" } else { "PDB" },
                first.join("; ")
            ))
        })?;
    let mut tally = Tally::default();
    if let Some(model) = pdb.models().next() {
        for chain in model.chains() {
            for residue in chain.residues() {
                let id = format!("{:?}", residue.id());
                for atom in residue.atoms() {
                    let (x, y, z) = atom.pos();
                    let element = atom
                        .element()
                        .map(|e| element_case(e.symbol()))
                        .unwrap_or_default();
                    tally.atom(chain.id(), &id, &element, atom.hetero(), [x, y, z]);
                }
            }
        }
    }
    if tally.atoms == 0 {
        return Err(ContentError::Malformed(format!(
            "no atoms found; a {} file lists its atoms as {}",
            if mmcif { "mmCIF" } else { "PDB" },
            if mmcif {
                "rows of its _atom_site loop"
            } else {
                "ATOM/HETATM records"
            }
        )));
    }
    Ok(tally.facts(models.max(1), None))
}

/// Distinct `_atom_site.pdbx_PDB_model_num` values of an mmCIF file's atom loop (rows split
/// on white space: the loop's values are names, numbers and coordinates, quoted without
/// spaces). 1 when the column is absent.
fn mmcif_models(bytes: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.lines().map(str::trim);
    let mut seen = std::collections::HashSet::new();
    while let Some(line) = lines.next() {
        if line != "loop_" {
            continue;
        }
        let mut columns = Vec::new();
        let mut row = None;
        for l in lines.by_ref() {
            if let Some(name) = l.strip_prefix('_') {
                columns.push(name.to_string());
            } else {
                row = Some(l);
                break;
            }
        }
        let Some(at) = columns
            .iter()
            .position(|c| c == "atom_site.pdbx_PDB_model_num")
        else {
            continue;
        };
        for l in row.into_iter().chain(lines.by_ref()) {
            if l.is_empty() || l.starts_with('#') || l.starts_with('_') || l == "loop_" {
                break;
            }
            if let Some(model) = l.split_whitespace().nth(at) {
                seen.insert(model.to_string());
            }
        }
        break;
    }
    seen.len().max(1) as u64
}
