//! Sequence files: FASTA and FASTQ records, their lengths and residues.
//!
//! FASTA is read here, byte by byte through the buffer, never holding a sequence: an
//! unwrapped chromosome is one line of hundreds of megabytes, and noodles-fasta keeps each
//! record's sequence whole (and brings noodles-bgzf with rayon and crossbeam for indexed,
//! compressed reading that inspection does not need). FASTQ records are short by nature and
//! go through noodles-fastq.

use std::io::BufRead;

use schemars::JsonSchema;
use serde::Serialize;

use super::error::ContentError;
use super::shown::shown;
/// Record ids shown.
const SHOWN_IDS: usize = 5;
/// Longest record id shown, in characters.
const MAX_ID_CHARS: usize = 80;
/// Bytes of a header line kept (the id is its first word).
const MAX_HEADER_BYTES: usize = 256;

/// What a FASTA or FASTQ file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SequenceFacts {
    pub records: u64,
    /// Residues of the shortest record (letters and `*`; gaps are counted apart).
    pub min_length: u64,
    pub max_length: u64,
    pub total_length: u64,
    /// The alphabet the residues suggest.
    pub alphabet: Alphabet,
    /// The first record ids (the header's first word), in file order.
    pub first_ids: Vec<String>,
    /// Gap characters (`-`, `.`) across all records: an alignment has them.
    #[serde(skip_serializing_if = "is_zero")]
    pub gap_characters: u64,
    /// Characters in sequences that are neither residues nor gaps (digits, punctuation).
    #[serde(skip_serializing_if = "is_zero")]
    pub other_characters: u64,
    /// FASTQ only: the range of quality characters and the encoding it suggests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<QualityFacts>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The alphabet of a sequence file, guessed from its residues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Alphabet {
    Dna,
    Rna,
    Protein,
    /// No residues to judge by.
    Unknown,
}

/// The quality line's range in a FASTQ file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct QualityFacts {
    /// Lowest and highest quality character, as ASCII codes.
    pub lowest: u8,
    pub highest: u8,
    /// `phred+33` (Sanger, Illumina 1.8+), `solexa+64`, `phred+64` (Illumina 1.3–1.7), or
    /// `phred+33 or phred+64` when the range fits both.
    pub encoding: String,
}

/// Residue letters seen, by letter (upper-cased).
#[derive(Debug, Default)]
struct Residues {
    letters: [u64; 26],
    gaps: u64,
    other: u64,
}

impl Residues {
    /// Count one sequence byte; true when it is a residue (adds to the record's length).
    fn see(&mut self, b: u8) -> bool {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {
                self.letters[usize::from(b.to_ascii_uppercase() - b'A')] += 1;
                true
            }
            b'*' => true,
            b'-' | b'.' => {
                self.gaps += 1;
                false
            }
            b' ' | b'\t' | b'\r' | b'\n' => false,
            _ => {
                self.other += 1;
                false
            }
        }
    }

    /// Nucleic acid when nine residues in ten are A, C, G, T, U or N and the rest are IUPAC
    /// ambiguity codes; RNA when it has U and no T; otherwise protein.
    fn alphabet(&self) -> Alphabet {
        let count = |c: u8| self.letters[usize::from(c - b'A')];
        let total: u64 = self.letters.iter().sum();
        if total == 0 {
            return Alphabet::Unknown;
        }
        let core: u64 = b"ACGTUN".iter().map(|c| count(*c)).sum();
        let iupac: u64 = b"ACGTUNRYKMSWBDHV".iter().map(|c| count(*c)).sum();
        if iupac == total && core * 10 >= total * 9 {
            if count(b'U') > 0 && count(b'T') == 0 {
                Alphabet::Rna
            } else {
                Alphabet::Dna
            }
        } else {
            Alphabet::Protein
        }
    }
}

/// Lengths and ids of the records seen so far.
#[derive(Debug, Default)]
struct Records {
    count: u64,
    min: u64,
    max: u64,
    total: u64,
    ids: Vec<String>,
}

impl Records {
    fn push(&mut self, header: &[u8], length: u64) {
        if self.ids.len() < SHOWN_IDS {
            let header = String::from_utf8_lossy(header);
            let id = header.split_whitespace().next().unwrap_or_default();
            self.ids.push(shown(id, MAX_ID_CHARS));
        }
        self.min = if self.count == 0 {
            length
        } else {
            self.min.min(length)
        };
        self.max = self.max.max(length);
        self.total += length;
        self.count += 1;
    }

    fn facts(self, residues: &Residues, quality: Option<QualityFacts>) -> SequenceFacts {
        SequenceFacts {
            records: self.count,
            min_length: self.min,
            max_length: self.max,
            total_length: self.total,
            alphabet: residues.alphabet(),
            first_ids: self.ids,
            gap_characters: residues.gaps,
            other_characters: residues.other,
            quality,
        }
    }
}

/// A FASTA file's records, streamed: headers are cut at [`MAX_HEADER_BYTES`], sequences are
/// counted, never kept.
pub fn fasta(reader: &mut impl BufRead) -> Result<SequenceFacts, ContentError> {
    let mut records = Records::default();
    let mut residues = Residues::default();
    let mut header: Vec<u8> = Vec::new();
    let mut in_record = false;
    let mut in_header = false;
    let mut line_start = true;
    let mut line = 1u64;
    let mut length = 0u64;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        for &b in buf {
            if line_start {
                line_start = false;
                if b == b'>' {
                    if in_record {
                        records.push(&header, length);
                    }
                    header.clear();
                    length = 0;
                    in_record = true;
                    in_header = true;
                    continue;
                }
            }
            if b == b'\n' {
                line += 1;
                line_start = true;
                in_header = false;
                continue;
            }
            if in_header {
                if header.len() < MAX_HEADER_BYTES {
                    header.push(b);
                }
                continue;
            }
            if !in_record {
                if b.is_ascii_whitespace() {
                    continue;
                }
                return Err(ContentError::Malformed(format!(
                    "line {line} holds sequence data before the first '>' header; a FASTA file starts with a '>' line naming the first record"
                )));
            }
            if residues.see(b) {
                length += 1;
            }
        }
        reader.consume(n);
    }
    if !in_record {
        return Err(ContentError::malformed(
            "no '>' record header found; a FASTA file has a '>' line before each sequence",
        ));
    }
    records.push(&header, length);
    Ok(records.facts(&residues, None))
}

/// A FASTQ file's records through noodles-fastq, with the quality range.
pub fn fastq(reader: &mut impl BufRead) -> Result<SequenceFacts, ContentError> {
    let mut fastq = noodles_fastq::io::Reader::new(reader);
    let mut record = noodles_fastq::Record::default();
    let mut records = Records::default();
    let mut residues = Residues::default();
    let (mut lowest, mut highest) = (u8::MAX, u8::MIN);
    loop {
        let n = fastq.read_record(&mut record).map_err(|e| {
            ContentError::Malformed(format!(
                "record {} is not valid FASTQ: {e}",
                records.count + 1
            ))
        })?;
        if n == 0 {
            break;
        }
        let seq = record.sequence();
        let qual = record.quality_scores();
        if seq.len() != qual.len() {
            return Err(ContentError::Malformed(format!(
                "record {} ('{}') has {} residues but {} quality characters; each residue needs one",
                records.count + 1,
                shown(&String::from_utf8_lossy(record.name()), MAX_ID_CHARS),
                seq.len(),
                qual.len()
            )));
        }
        let length = seq.iter().filter(|b| residues.see(**b)).count() as u64;
        for &q in qual {
            lowest = lowest.min(q);
            highest = highest.max(q);
        }
        records.push(record.name(), length);
    }
    if records.count == 0 {
        return Err(ContentError::malformed(
            "no FASTQ record found; each record is an '@' line, the sequence, a '+' line and the qualities",
        ));
    }
    let quality = (lowest <= highest).then(|| QualityFacts {
        lowest,
        highest,
        encoding: quality_encoding(lowest, highest).to_string(),
    });
    Ok(records.facts(&residues, quality))
}

/// The quality encoding a range of quality characters suggests.
fn quality_encoding(lowest: u8, highest: u8) -> &'static str {
    match lowest {
        0..59 => "phred+33",
        59..64 => "solexa+64",
        // 'J' (74) is Q41, the highest phred+33 score of current instruments.
        _ if highest > 74 => "phred+64",
        _ => "phred+33 or phred+64",
    }
}
