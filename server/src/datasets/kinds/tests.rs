//! Each kind on the small files under tests/fixtures/files and on FITS bytes built here.

use super::format::SNIFF_BYTES;
use super::sequences::Alphabet;
use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/files")
        .join(name);
    fs_err::read(path).unwrap()
}

fn facts(name: &str, bytes: &[u8]) -> Result<FileInspection, KindError> {
    describe(sniff(name, &bytes[..bytes.len().min(SNIFF_BYTES)]), bytes)
}

/// One 80-byte header card.
fn card(text: &str) -> Vec<u8> {
    assert!(text.len() <= 80, "{text}");
    format!("{text:<80}").into_bytes()
}

fn value(key: &str, v: &str) -> Vec<u8> {
    card(&format!("{key:<8}= {v:>20}"))
}

fn string(key: &str, v: &str) -> Vec<u8> {
    card(&format!("{key:<8}= '{v:<8}'"))
}

/// Pad to a whole number of 2880-byte FITS blocks with `fill`.
fn blocks(mut bytes: Vec<u8>, fill: u8) -> Vec<u8> {
    let len = bytes.len().div_ceil(2880) * 2880;
    bytes.resize(len, fill);
    bytes
}

/// A FITS file: a 4×3 16-bit primary image and a two-row binary table (RA as E, DEC as D).
pub(super) fn fits_bytes() -> Vec<u8> {
    let mut primary = Vec::new();
    for c in [
        value("SIMPLE", "T"),
        value("BITPIX", "16"),
        value("NAXIS", "2"),
        value("NAXIS1", "4"),
        value("NAXIS2", "3"),
        value("EXTEND", "T"),
        string("OBJECT", "M31"),
        string("TELESCOP", "TEST"),
        string("BUNIT", "ADU"),
        card("END"),
    ] {
        primary.extend(c);
    }
    let mut out = blocks(primary, b' ');
    out.extend(blocks(vec![0u8; 4 * 3 * 2], 0));
    let mut table = Vec::new();
    for c in [
        string("XTENSION", "BINTABLE"),
        value("BITPIX", "8"),
        value("NAXIS", "2"),
        value("NAXIS1", "12"),
        value("NAXIS2", "2"),
        value("PCOUNT", "0"),
        value("GCOUNT", "1"),
        value("TFIELDS", "2"),
        string("TTYPE1", "RA"),
        string("TFORM1", "E"),
        string("TTYPE2", "DEC"),
        string("TFORM2", "D"),
        string("EXTNAME", "CATALOG"),
        card("END"),
    ] {
        table.extend(c);
    }
    out.extend(blocks(table, b' '));
    out.extend(blocks(vec![1u8; 12 * 2], 0));
    out
}

#[test]
fn kinds_come_from_the_extension_then_the_content() {
    let by = |name: &str, head: &[u8]| {
        let f = sniff(name, head);
        (f.kind, f.name)
    };
    assert_eq!(by("a.CSV", b"SIMPLE  ="), (FileKind::Table, "csv"));
    assert_eq!(by("p.faa", b""), (FileKind::Sequences, "fasta"));
    assert_eq!(by("r.fq", b""), (FileKind::Sequences, "fastq"));
    assert_eq!(by("l.pdbqt", b""), (FileKind::Structure, "pdbqt"));
    assert_eq!(by("s.cif", b""), (FileKind::Structure, "mmcif"));
    assert_eq!(by("image.fts", b""), (FileKind::Fits, "fits"));
    // No telling extension: the first bytes decide.
    assert_eq!(by("image", &fits_bytes()[..100]), (FileKind::Fits, "fits"));
    assert_eq!(
        by("seqs.txt", b">a\nACGT\n"),
        (FileKind::Sequences, "fasta")
    );
    assert_eq!(
        by("reads", b"@r1\nACGT\n+\nIIII\n"),
        (FileKind::Sequences, "fastq")
    );
    assert_eq!(
        by("notes", b"@mention me\nhello\n"),
        (FileKind::File, "text")
    );
    assert_eq!(
        by("x", &fixture("receptor.pdb")),
        (FileKind::Structure, "pdb")
    );
    assert_eq!(
        by("x", &fixture("ligand.pdbqt")),
        (FileKind::Structure, "pdbqt")
    );
    assert_eq!(
        by("x", &fixture("receptor.pdbqt")),
        (FileKind::Structure, "pdbqt")
    );
    assert_eq!(
        by("x.dat", &fixture("fragment.cif")),
        (FileKind::Structure, "mmcif")
    );
    assert_eq!(
        by("t.xml", &fixture("table.vot")),
        (FileKind::File, "votable")
    );
    assert_eq!(
        by("t.xml", b"<?xml version='1.0'?><a/>"),
        (FileKind::File, "xml")
    );
    assert_eq!(by("junk", &[0, 159, 146, 150]), (FileKind::File, "unknown"));
    assert_eq!(sniff("t.vot", b"").media_type, "application/x-votable+xml");
}

#[test]
fn fasta_records_lengths_alphabet_and_ids() {
    let f = facts("proteins.fasta", &fixture("proteins.fasta")).unwrap();
    assert_eq!((f.kind, f.format.as_str()), (FileKind::Sequences, "fasta"));
    let s = f.sequences.unwrap();
    assert_eq!(s.records, 2);
    assert_eq!(
        (s.min_length, s.max_length, s.total_length),
        (142, 147, 289)
    );
    assert_eq!(s.alphabet, Alphabet::Protein);
    assert_eq!(s.first_ids, ["sp|P69905|HBA_HUMAN", "sp|P68871|HBB_HUMAN"]);
    assert!(s.quality.is_none());

    let s = facts("genes.fa", &fixture("genes.fa"))
        .unwrap()
        .sequences
        .unwrap();
    assert_eq!(s.records, 3);
    assert_eq!((s.min_length, s.max_length, s.total_length), (3, 16, 31));
    assert_eq!(s.alphabet, Alphabet::Dna);
    assert_eq!(s.first_ids, ["gene1", "gene2", "gene3"]);

    let s = facts("r.fasta", b">r\nACGUUAGC\n>s\nGGCU-AU.\n")
        .unwrap()
        .sequences
        .unwrap();
    assert_eq!(s.alphabet, Alphabet::Rna);
    assert_eq!(s.gap_characters, 2);
    assert_eq!(s.total_length, 14);
}

#[test]
fn fasta_that_is_not_fasta_is_refused_naming_the_line() {
    let e = facts("x.fasta", b"\nACGT\n>a\nAC\n").unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
    assert!(e.to_string().contains("before the first '>'"), "{e}");
    let e = facts("x.fasta", b"").unwrap_err();
    assert!(e.to_string().contains("no '>' record header"), "{e}");
}

#[test]
fn an_unwrapped_chromosome_is_counted_not_kept() {
    let mut bytes = b">chr1 one line\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'A', 5_000_000));
    bytes.extend(b"\n>chr2\nC");
    let s = facts("g.fa", &bytes).unwrap().sequences.unwrap();
    assert_eq!((s.records, s.max_length, s.min_length), (2, 5_000_000, 1));
}

#[test]
fn fastq_records_and_quality_encoding() {
    let s = facts("reads.fastq", &fixture("reads.fastq"))
        .unwrap()
        .sequences
        .unwrap();
    assert_eq!(s.records, 3);
    assert_eq!((s.min_length, s.max_length, s.total_length), (5, 10, 23));
    assert_eq!(s.alphabet, Alphabet::Dna);
    assert_eq!(s.first_ids, ["read1", "read2", "read3"]);
    let q = s.quality.unwrap();
    assert_eq!(
        (q.lowest, q.highest, q.encoding.as_str()),
        (b'!', b'I', "phred+33")
    );

    let e = facts("bad.fastq", b"@r1\nACGT\n+\nII\n").unwrap_err();
    assert!(e.to_string().contains("4 residues but 2 quality"), "{e}");
    let e = facts("bad.fq", b"ACGT\n").unwrap_err();
    assert!(e.to_string().contains("record 1"), "{e}");
}

#[test]
fn pdb_through_pdbtbx() {
    let f = facts("receptor.pdb", &fixture("receptor.pdb")).unwrap();
    assert_eq!((f.kind, f.format.as_str()), (FileKind::Structure, "pdb"));
    let s = f.structure.unwrap();
    assert_eq!(s.models, 1);
    assert_eq!(s.chains, ["A", "B"]);
    assert_eq!((s.residues, s.atoms, s.hetatm), (5, 11, 2));
    assert_eq!(s.elements["C"], 4);
    assert_eq!(s.elements["O"], 3);
    assert_eq!(s.elements["N"], 3);
    assert_eq!(s.elements["Zn"], 1);
    let b = s.bounding_box.unwrap();
    assert_eq!(b.min, [10.0, 17.0, 26.0]);
    assert_eq!(b.max, [21.0, 26.0, 34.0]);
    assert_eq!(b.center, [15.5, 21.5, 30.0]);
    assert_eq!(b.size, [11.0, 9.0, 8.0]);
}

#[test]
fn pdbqt_by_its_columns_gives_the_same_facts_with_elements_from_autodock_types() {
    let s = facts("receptor.pdbqt", &fixture("receptor.pdbqt"))
        .unwrap()
        .structure
        .unwrap();
    let pdb = facts("receptor.pdb", &fixture("receptor.pdb"))
        .unwrap()
        .structure
        .unwrap();
    assert_eq!(s, pdb);

    let s = facts("ligand.pdbqt", &fixture("ligand.pdbqt"))
        .unwrap()
        .structure
        .unwrap();
    assert_eq!(s.models, 2);
    assert_eq!((s.atoms, s.hetatm, s.residues), (5, 5, 1));
    assert_eq!(s.torsions, Some(1));
    let elements: Vec<(&str, u64)> = s.elements.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(elements, [("C", 2), ("H", 1), ("N", 1), ("O", 1)]);
    // The first pose only (the second is shifted by 1 Å in x).
    assert_eq!(s.bounding_box.unwrap().min, [0.3, 0.0, 0.0]);

    let e = facts(
        "x.pdbqt",
        b"ATOM      1  N   GLY A   1      10.000  abc     30.000\n",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("line 1: the y coordinate (columns 39-46)"),
        "{e}"
    );
    let pdb_line =
        "ATOM      1  N   GLY A   1      10.000  20.000  30.000  1.00  0.00           N  \n";
    let e = facts("x.pdbqt", pdb_line.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("no AutoDock atom type"), "{e}");
}

#[test]
fn mmcif_through_pdbtbx() {
    let s = facts("fragment.cif", &fixture("fragment.cif"))
        .unwrap()
        .structure
        .unwrap();
    assert_eq!(s.models, 2);
    assert_eq!(s.chains, ["A", "B"]);
    assert_eq!((s.atoms, s.hetatm), (6, 1));
    assert_eq!(s.elements["Zn"], 1);
    assert_eq!(s.bounding_box.unwrap().max, [16.0, 22.0, 33.0]);
    let e = facts("x.cif", b"data_x\n_cell.length_a 1\n").unwrap_err();
    assert_eq!(e.format, "mmcif");
}

#[test]
fn fits_hdus_shapes_and_keys() {
    let bytes = fits_bytes();
    let f = facts("image.fits", &bytes).unwrap();
    assert_eq!(
        (f.kind, f.media_type.as_str()),
        (FileKind::Fits, "application/fits")
    );
    let fits = f.fits.unwrap();
    assert_eq!(fits.hdu_count, 2);
    assert_eq!(fits.truncated_at_hdu, None);
    let p = &fits.hdus[0];
    assert_eq!(
        (p.hdu_type.as_str(), p.bitpix, p.shape.as_slice()),
        ("primary", 16, &[4, 3][..])
    );
    assert_eq!(p.data_bytes, 24);
    assert_eq!(p.keys["OBJECT"], "M31");
    assert_eq!(p.keys["BUNIT"], "ADU");
    let t = &fits.hdus[1];
    assert_eq!(t.hdu_type, "bintable");
    assert_eq!((t.rows, t.fields), (Some(2), Some(2)));
    assert_eq!(t.columns, ["RA", "DEC"]);
    assert_eq!(t.keys["EXTNAME"], "CATALOG");

    // Cut inside the table's data: the table is named as truncated.
    let cut = &bytes[..2880 * 3 + 10];
    let fits = facts("cut.fits", cut).unwrap().fits.unwrap();
    assert_eq!(fits.truncated_at_hdu, Some(1));
}

#[test]
fn hostile_fits_gives_errors_not_hangs() {
    // A header that never ends.
    let mut endless = value("SIMPLE", "T");
    endless.extend(value("BITPIX", "8"));
    endless.extend(value("NAXIS", "0"));
    for i in 0..40_000 {
        endless.extend(card(&format!("COMMENT {i}")));
    }
    let e = facts("endless.fits", &endless).unwrap_err();
    assert_eq!(e.format, "fits");
    // Junk behind a FITS name.
    let e = facts("junk.fits", &[0xffu8; 5000]).unwrap_err();
    assert_eq!(e.format, "fits");
    // An absurd shape: described, its data announced but absent.
    let mut huge = Vec::new();
    for c in [
        value("SIMPLE", "T"),
        value("BITPIX", "-64"),
        value("NAXIS", "3"),
        value("NAXIS1", "100000000"),
        value("NAXIS2", "100000000"),
        value("NAXIS3", "100000000"),
        card("END"),
    ] {
        huge.extend(c);
    }
    let huge = blocks(huge, b' ');
    match facts("huge.fits", &huge) {
        Ok(f) => assert_eq!(f.fits.unwrap().truncated_at_hdu, Some(0)),
        Err(e) => assert_eq!(e.format, "fits"),
    }
}

#[test]
fn other_files_say_whether_text_and_show_safe_first_lines() {
    let f = facts("table.vot", &fixture("table.vot")).unwrap();
    assert_eq!((f.kind, f.format.as_str()), (FileKind::File, "votable"));
    let file = f.file.unwrap();
    assert!(file.is_text);
    assert_eq!(file.lines, Some(13));
    assert!(
        file.first_lines[1].starts_with("<VOTABLE"),
        "{:?}",
        file.first_lines
    );
    let vot = file.votable.unwrap();
    assert_eq!((vot.tables, vot.rows, vot.complete), (1, 2, true));
    let fields: Vec<(&str, Option<&str>, Option<&str>)> = vot
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.datatype.as_deref(), f.unit.as_deref()))
        .collect();
    assert_eq!(
        fields,
        [
            ("ra", Some("double"), Some("deg")),
            ("dec", Some("double"), Some("deg"))
        ]
    );
    // Broken XML behind a VOTable name: refused naming the place.
    let e = facts("bad.vot", b"<VOTABLE><TABLE></FIELD></VOTABLE>").unwrap_err();
    assert!(e.to_string().contains("not well-formed XML"), "{e}");
    // XML that is not a VOTable.
    let e = facts("x.vot", b"<?xml version='1.0'?><a/>").unwrap_err();
    assert!(e.to_string().contains("no VOTABLE element"), "{e}");

    let f = facts("notes.txt", "a\u{202e}b\x1b[31m\tc\nlast".as_bytes()).unwrap();
    let file = f.file.unwrap();
    assert_eq!(file.first_lines, ["ab[31m c", "last"]);
    assert_eq!(file.lines, Some(2));

    let f = facts("blob.bin", &[0u8, 1, 2, 255]).unwrap();
    assert_eq!(f.media_type, "application/octet-stream");
    let file = f.file.unwrap();
    assert!(!file.is_text);
    assert!(file.first_lines.is_empty());
}

#[test]
fn artifacts_of_known_kinds_get_their_facts_only_when_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = fits_bytes();
    fs_err::write(dir.path().join("image.fits"), &bytes).unwrap();
    fs_err::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let sha = scimcp_core::hash::sha256_hex(&bytes);
    let uri = "scimcp://runs/run-0123456789abcdef/artifacts/image.fits";
    let size = bytes.len() as u64;
    let Some(rmcp::model::ResourceContents::TextResourceContents { text, .. }) =
        artifact_facts(uri, dir.path(), "image.fits", size, &sha)
    else {
        panic!("no facts for a FITS artifact")
    };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["facts"]["fits"]["hdu_count"], 2, "{v:#}");
    // Changed since it was recorded: no facts (the artifact's own content says why).
    assert!(artifact_facts(uri, dir.path(), "image.fits", size, &"0".repeat(64)).is_none());
    // Not a scientific kind: nothing extra.
    let text_sha = scimcp_core::hash::sha256_hex(b"hello\n");
    assert!(artifact_facts(uri, dir.path(), "notes.txt", 6, &text_sha).is_none());
}

#[test]
fn pdb_by_columns_agrees_with_pdbtbx() {
    let bytes = fixture("receptor.pdb");
    let by_columns = structure::pdb_by_columns(&mut &bytes[..]).unwrap();
    let pdbtbx = facts("receptor.pdb", &bytes).unwrap().structure.unwrap();
    assert_eq!(by_columns, pdbtbx);
    // No element columns: the element comes from the atom name (`CA` of calcium, ` C` of a
    // carbon).
    let lines = "HETATM    1 CA    CA A 101       1.000   2.000   3.000  1.00  0.00\n\
                 ATOM      2  CA  GLY A   1       4.000   5.000   6.000  1.00  0.00\n";
    let s = structure::pdb_by_columns(&mut lines.as_bytes()).unwrap();
    let elements: Vec<(&str, u64)> = s.elements.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(elements, [("C", 1), ("Ca", 1)]);
}

#[test]
fn hostile_structures_and_sequences_give_errors_naming_the_format() {
    let junk: Vec<u8> = (0..20_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    for name in ["x.pdb", "x.cif", "x.pdbqt", "x.fasta", "x.fastq"] {
        match facts(name, &junk) {
            Err(e) => assert_eq!(
                e.format,
                name.rsplit_once('.').unwrap().1.replace("cif", "mmcif")
            ),
            Ok(f) => panic!("{name}: junk was described: {f:?}"),
        }
    }
    // A FASTQ record whose lines never end is read to the end of the (bounded) input, once.
    let mut long = b"@r\n".to_vec();
    long.extend(std::iter::repeat_n(b'A', 2_000_000));
    assert!(facts("long.fq", &long).is_err());
}
